/* schedlab: time the arithmetic kernels of the AIM7 compute mix on this host.
 * Our own loops with re-aim-7's loop counts and 12 dependent operations per
 * iteration (add.c, mul.c, div.c register_test() arguments); the operands
 * come from argv so the compiler cannot fold the chains.
 * Build: cc -O2 -o arith_bench arith_bench.c   Run: ./arith_bench 1 -1
 * Prints one line per test: name, loop count, best-of-5 ms per call. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#define CHAIN12(a, b, c, OP)                                                   \
	a OP b; b OP c; b OP c; c OP a; c OP a; a OP b;                        \
	a OP b; b OP c; b OP c; c OP a; c OP a; a OP b;

/* the integer divides keep re-aim's operand order (x /= 1 stays exact) */
#define DIVCHAIN12(a, b, c, OP)                                                \
	a OP b; a OP c; b OP c; c OP b; a OP b; a OP c;                        \
	b OP c; c OP b; a OP b; a OP c; b OP c; c OP b;

#define BENCH(NAME, T, LOOPS, INIT_A, INIT_B, INIT_C, OP) BENCHC(NAME, T, LOOPS, INIT_A, INIT_B, INIT_C, OP, CHAIN12)
#define BENCHC(NAME, T, LOOPS, INIT_A, INIT_B, INIT_C, OP, CHAIN)                      \
	do {                                                                   \
		double best = 1e18;                                            \
		for (int rep = 0; rep < 5; rep++) {                            \
			volatile T sink;                                       \
			T a = (INIT_A), b = (INIT_B), c = (INIT_C);            \
			double t0 = now_ms();                                  \
			for (long n = (LOOPS); n > 0; n--) {                   \
				CHAIN(a, b, c, OP)                             \
			}                                                      \
			double dt = now_ms() - t0;                             \
			sink = a + b + c;                                      \
			(void)sink;                                            \
			if (dt < best)                                         \
				best = dt;                                     \
		}                                                              \
		printf("%-12s %9ld %9.3f\n", NAME, (long)(LOOPS), best);       \
	} while (0)

int main(int argc, char **argv)
{
	long one = argc > 1 ? atol(argv[1]) : 1;     /* 1 */
	long mone = argc > 2 ? atol(argv[2]) : -1;   /* -1 */
	double x = 3.14159 * one, y = -3.14159 * -mone;
	BENCH("add_double", double, 1500000, 0.0, x, -x, +=);
	BENCH("add_int", int, 5000000, 0, (int)(3 * one), (int)(3 * mone), +=);
	BENCH("add_long", long, 5000000, 0, 3 * one, 3 * mone, +=);
	BENCH("mul_double", double, 1000000, 1.0, x, 1.0 / x, *=);
	BENCH("mul_int", int, 20000, 12345678, (int)one, (int)one, *=);
	BENCH("mul_long", long, 20000, 12345678, one, one, *=);
	BENCHC("div_double", double, 250000, 1.0, 4.0 * one, 0.25 * one, /=, DIVCHAIN12);
	BENCHC("div_int", int, 75000, 1234578, (int)one, (int)one, /=, DIVCHAIN12);
	BENCHC("div_long", long, 75000, 1234578, one, one, /=, DIVCHAIN12);
	(void)y;
	return 0;
}
