//! The run parameters as flags: built from the one table of parameters
//! (`steps::plan::Param`), so a flag's name, unit and help are the page's too.

use std::marker::PhantomData;

use clap::{Arg, ArgAction, ArgMatches, Command};

use pipebench::size::ByteSize;
use pipebench::steps::plan::{Param, RunParams, Unit, DEFAULT_RUN_BYTES, SWEEP_SECONDS};

/// Which run parameters a subcommand takes as flags.
pub trait FlagSet {
    /// The parameters, in the order `--help` lists them.
    const PARAMS: &'static [Param];

    /// What the flag's help says: the parameter's sentence, and the default where
    /// the command has its own.
    fn help(param: Param) -> String {
        param.help().to_string()
    }
}

/// `run` and `all`: everything that shapes one run.
#[derive(Debug, Clone, Copy)]
pub struct Shape;

impl FlagSet for Shape {
    const PARAMS: &'static [Param] = &[
        Param::Bytes,
        Param::BufSize,
        Param::PipeSize,
        Param::Seconds,
        Param::WriterCpu,
        Param::ReaderCpu,
        Param::Verify,
        Param::Counts,
        Param::TraceSyscalls,
    ];

    fn help(param: Param) -> String {
        match param {
            Param::Bytes => format!("{} Default {DEFAULT_RUN_BYTES}.", param.help()),
            Param::Counts => "Leave the kernel's events uncounted (page allocations, wakeups, \
                              IPIs, TLB flushes); context switches and faults are counted \
                              anyway, at no cost."
                .into(),
            _ => param.help().to_string(),
        }
    }
}

/// `sweep`: what shapes each run, but the swept parameter (its own flag takes a
/// list of values).
#[derive(Debug, Clone, Copy)]
pub struct SweepShape;

impl FlagSet for SweepShape {
    const PARAMS: &'static [Param] = &[
        Param::Bytes,
        Param::Seconds,
        Param::WriterCpu,
        Param::ReaderCpu,
        Param::Verify,
        Param::Counts,
    ];

    fn help(param: Param) -> String {
        match param {
            Param::Counts => Shape::help(param),
            Param::Seconds => format!(
                "{} Default {SWEEP_SECONDS} s per run when --bytes is not given.",
                param.help()
            ),
            _ => param.help().to_string(),
        }
    }
}

/// The run parameters a command line gave, for the flags of `S`.
#[derive(Debug, Clone)]
pub struct RunFlags<S> {
    /// What was given; what was not stays `None`.
    pub params: RunParams,
    set: PhantomData<S>,
}

/// Flags that are on unless turned off: their flag is `--no-NAME`.
const ON_BY_DEFAULT: [Param; 1] = [Param::Counts];

/// The flag of `param`.
fn arg<S: FlagSet>(param: Param) -> Arg {
    let flag = param.name().replace('_', "-");
    let flag = match ON_BY_DEFAULT.contains(&param) {
        true => format!("no-{flag}"),
        false => flag,
    };
    let arg = Arg::new(param.name()).long(flag).help(S::help(param));
    match param.unit() {
        Unit::Bytes => arg
            .value_name("SIZE")
            .value_parser(clap::value_parser!(ByteSize)),
        Unit::Seconds => arg
            .value_name("SECONDS")
            .value_parser(clap::value_parser!(f64)),
        Unit::Cpu => arg
            .value_name("CPU")
            .value_parser(clap::value_parser!(usize)),
        Unit::Flag => arg.action(ArgAction::SetTrue),
    }
}

impl<S: FlagSet> clap::FromArgMatches for RunFlags<S> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut params = RunParams::default();
        for &param in S::PARAMS {
            let name = param.name();
            let size = || matches.get_one::<ByteSize>(name).copied();
            let cpu = || matches.get_one::<usize>(name).copied();
            let flag = || matches.get_flag(name).then_some(true);
            match param {
                Param::Bytes => params.bytes = size(),
                Param::BufSize => params.buf_size = size(),
                Param::PipeSize => params.pipe_size = size(),
                Param::Seconds => params.seconds = matches.get_one::<f64>(name).copied(),
                Param::WriterCpu => params.writer_cpu = cpu(),
                Param::ReaderCpu => params.reader_cpu = cpu(),
                Param::Verify => params.verify = flag(),
                Param::Quiet => params.quiet = flag(),
                Param::Profile => params.profile = flag(),
                // `--no-counts` turns counting off; left out, the default stays.
                Param::Counts => params.counts = flag().map(|_| false),
                Param::TraceSyscalls => params.trace_syscalls = flag(),
            }
        }
        Ok(RunFlags {
            params,
            set: PhantomData,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl<S: FlagSet> clap::Args for RunFlags<S> {
    fn augment_args(command: Command) -> Command {
        S::PARAMS
            .iter()
            .fold(command, |command, &param| command.arg(arg::<S>(param)))
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct ProbeFlags {
        #[command(flatten)]
        flags: RunFlags<Shape>,
    }

    #[test]
    fn flags_are_the_table_s_names_with_dashes() {
        let probe = ProbeFlags::try_parse_from([
            "probe",
            "--bytes",
            "1GiB",
            "--buf-size",
            "64KiB",
            "--seconds",
            "1.5",
            "--reader-cpu",
            "1",
            "--verify",
        ])
        .unwrap();
        let params = probe.flags.params;
        assert_eq!(params.bytes, Some(ByteSize(1 << 30)));
        assert_eq!(params.buf_size, Some(ByteSize(64 << 10)));
        assert_eq!(params.seconds, Some(1.5));
        assert_eq!(params.reader_cpu, Some(1));
        assert_eq!(params.verify, Some(true));
        assert_eq!(params.pipe_size, None);
        assert!(ProbeFlags::try_parse_from(["probe", "--quiet"]).is_err());
        assert!(ProbeFlags::try_parse_from(["probe", "--bytes", "lots"]).is_err());
    }
}
