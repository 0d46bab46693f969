/* Cost of a copy-on-write page fault: fork, then the child writes one byte
 * to each of N pages the parent touched; prints the per-fault time. Used to
 * estimate CostModel.child_start_ns (scripts/calibration/measure_child_startup.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  int pages = argc>1?atoi(argv[1]):160, reps = argc>2?atoi(argv[2]):200;
  size_t sz=(size_t)pages*4096;
  char*p=mmap(0,sz,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
  memset(p,1,sz);
  int fd[2]; pipe(fd);
  double tot=0, tfork=0;
  for(int r=0;r<reps;r++){
    double t0=now();
    pid_t c=fork();
    if(c==0){ double a=now(); for(size_t i=0;i<sz;i+=4096) p[i]=2; double b=now(); double d=b-a; write(fd[1],&d,sizeof d); _exit(0);}
    double t1=now(); tfork+=t1-t0;
    double d; read(fd[0],&d,sizeof d); tot+=d; waitpid(c,0,0);
  }
  printf("pages %d: fork (parent) %.1f us, child COW of all pages %.1f us = %.2f us/fault\n",pages,tfork/reps*1e6,tot/reps*1e6,tot/reps*1e6/pages);
  return 0;
}
