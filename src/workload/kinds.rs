//! The workload kinds, each declared once: its name (`sl.workloads.<name>`,
//! the `kind` of a sweep spec and of the bindings' dispatch), its tasks'
//! roles and its parameters ([`super::params`]). The bindings' kind list,
//! `_core.WORKLOAD_KINDS`, `WORKLOAD_ROLES` and `WORKLOAD_PARAMS` and the
//! docs' parameter reference are made from [`KINDS`].

use super::params::Param;
use super::{aim7, hackbench, mix, pipe_pingpong, schbench, script, spinners, volano};

/// One workload kind.
#[derive(Clone, Copy, Debug)]
pub struct Kind {
    pub name: &'static str,
    /// The roles of its tasks (`Workload.roles`, `with_tasks(role=)`).
    pub roles: &'static [&'static str],
    /// Its builder's parameters, in the builder's order. For the kinds
    /// with a parameter struct they are also the keys the core reads; the
    /// builders of `spinners`, `rt_app`, `from_trace` and `mix` compile
    /// theirs into per-task lists or a script first.
    pub params: &'static [Param],
    /// Its parameters are a `workload_params!` struct: the core reads the
    /// builder's dict by these declarations (`name`s).
    pub keyed: bool,
}

/// Every workload kind, in the order the docs list them.
pub const KINDS: &[Kind] = &[
    Kind {
        name: "spinners",
        roles: spinners::ROLES,
        params: spinners::PARAMS,
        keyed: false,
    },
    Kind {
        name: "hackbench",
        roles: hackbench::ROLES,
        params: hackbench::HackbenchParams::PARAMS,
        keyed: true,
    },
    Kind {
        name: "pipe_pingpong",
        roles: pipe_pingpong::ROLES,
        params: pipe_pingpong::PipePingpongParams::PARAMS,
        keyed: true,
    },
    Kind {
        name: "volano",
        roles: volano::ROLES,
        params: volano::VolanoParams::PARAMS,
        keyed: true,
    },
    Kind {
        name: "aim7",
        roles: aim7::ROLES,
        params: aim7::Aim7Params::PARAMS,
        keyed: true,
    },
    Kind {
        name: "schbench",
        roles: schbench::ROLES,
        params: schbench::SchbenchParams::PARAMS,
        keyed: true,
    },
    Kind {
        name: "rt_app",
        roles: script::ROLES,
        params: script::RT_APP_PARAMS,
        keyed: false,
    },
    Kind {
        name: "from_trace",
        roles: script::ROLES,
        params: script::FROM_TRACE_PARAMS,
        keyed: false,
    },
    Kind {
        name: "mix",
        roles: &[],
        params: mix::PARAMS,
        keyed: false,
    },
];

/// The workload components a kind takes as one of its parameters, each
/// declared as a kind is (`rt_kthreads`: hackbench's RT kernel threads).
pub const COMPONENTS: &[Kind] = &[Kind {
    name: "rt_kthreads",
    roles: super::kthreads::ROLES,
    params: super::rt_kthreads::RtKthreads::PARAMS,
    keyed: true,
}];

/// The kinds' names, as an error lists them: `one of "spinners", ...`.
pub fn one_of() -> String {
    let names: Vec<&str> = KINDS.iter().map(|k| k.name).collect();
    crate::config::one_of_names(&names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_are_unique_and_each_parameter_names_its_kind() {
        for k in KINDS {
            assert_eq!(KINDS.iter().filter(|j| j.name == k.name).count(), 1);
            assert!(k.params.iter().all(|p| p.kind == k.name), "{}", k.name);
        }
        assert!(one_of().contains("\"from_trace\""));
    }
}
