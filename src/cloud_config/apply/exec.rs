//! Running one program of a cloud-config module inside the root being customized,
//! through [`crate::process`]: its own process group, a cleared environment, a timeout
//! after which the group is stopped, SIGTERM to vmcust stopping it the same way, bounded
//! output; sealed inside it ([`process::Sandbox`]) when the root is not `/`, as custom scripts are.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::process::{self, Cmd, Ended, Output};
use crate::root::Root;

/// Output lines of a failed program kept for its reason.
pub(crate) const KEPT_LINES: usize = 10;
/// Output lines of one program logged as it runs (the rest is counted).
pub(crate) const LOGGED_LINES: usize = 500;

/// How a program run ended, as a module needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    /// Exit status 0.
    Succeeded,
    /// Anything else, with the reason (and the last output lines) for people.
    Failed(String),
    /// vmcust was asked to stop: the group was stopped; the module did not finish.
    Interrupted,
}

/// One program to run: `program` is a path inside the root.
#[derive(Debug, Clone)]
pub(crate) struct Program<'a> {
    /// What runs it, for logs and reasons (`runcmd`, `packages`).
    pub module: &'a str,
    /// The program, inside the root.
    pub program: &'a str,
    /// Its arguments.
    pub args: Vec<String>,
    /// Environment variables besides `PATH` and `LANG`.
    pub env: Vec<(String, String)>,
    /// How long it may run.
    pub timeout: Duration,
    /// The arguments are a user's command words, which may hold secrets (as a script's
    /// body may): the log gives only how many there are.
    pub hide_args: bool,
}

/// Runs `p` inside `root` until it ends, its timeout passes or `stop` is set; notes the
/// run in the stage's [`journal`](super::journal) for the instance's record.
pub(crate) fn run(root: &Root, p: &Program, stop: &AtomicBool) -> RunEnd {
    run_in(root, p, None, &[], None, stop)
}

/// [`run`], the program reading `stdin` on its standard input (`sfdisk`'s script).
pub(crate) fn run_with_input(root: &Root, p: &Program, stdin: &[u8], stop: &AtomicBool) -> RunEnd {
    run_in(root, p, None, stdin, None, stop)
}

/// Standard output lines [`run_capturing`] keeps at most.
pub(crate) const CAPTURED_LINES: usize = 4096;

/// Runs `p` as [`run`] does, in the directory `cwd` (inside the root) when given, and
/// hands back its standard output's lines (the first [`CAPTURED_LINES`]), for a module
/// that reads a tool's answer (`subscription-manager list`, `ansible-pull --version`).
pub(crate) fn run_capturing(
    root: &Root,
    p: &Program,
    cwd: Option<&str>,
    stop: &AtomicBool,
) -> (RunEnd, Vec<String>) {
    let mut lines = Vec::new();
    let end = run_in(root, p, cwd, &[], Some(&mut lines), stop);
    (end, lines)
}

/// [`run`] in `cwd`, reading `stdin`, standard output kept in `stdout` when given.
fn run_in(
    root: &Root,
    p: &Program,
    cwd: Option<&str>,
    stdin: &[u8],
    stdout: Option<&mut Vec<String>>,
    stop: &AtomicBool,
) -> RunEnd {
    let (end, exit_status) = run_noted(root, p, cwd, stdin, stdout, stop);
    let command = if p.hide_args {
        format!("{} ({} arguments, not shown)", p.program, p.args.len())
    } else {
        shown(p)
    };
    super::journal::command(super::journal::CommandDone {
        module: p.module.to_string(),
        command,
        exit_status,
        result: match &end {
            RunEnd::Succeeded => "succeeded".to_string(),
            RunEnd::Failed(why) => format!("failed: {why}"),
            RunEnd::Interrupted => "interrupted".to_string(),
        },
    });
    end
}

/// The program and its arguments, as [`quoted_args`].
fn shown(p: &Program) -> String {
    if p.args.is_empty() {
        p.program.to_string()
    } else {
        format!("{} {}", p.program, quoted_args(p))
    }
}

/// Each argument as the shell would need it, so the line reads as the command.
fn quoted_args(p: &Program) -> String {
    p.args
        .iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c));
            if plain {
                a.clone()
            } else {
                super::commands::quote(a)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// [`run`], with the program's exit status when it exited.
fn run_noted(
    root: &Root,
    p: &Program,
    cwd: Option<&str>,
    stdin: &[u8],
    mut stdout: Option<&mut Vec<String>>,
    stop: &AtomicBool,
) -> (RunEnd, Option<i32>) {
    let live = root.path() == Path::new("/");
    let present = root.is_file(Path::new(p.program));
    if !present {
        return (
            RunEnd::Failed(format!(
                "{}: {} is not in the root; install it in the template",
                p.module, p.program
            )),
            None,
        );
    }
    let cmd = Cmd {
        program: p.program.into(),
        args: p.args.clone(),
        cwd: cwd.map(Into::into),
        env: p.env.clone(),
        timeout: p.timeout,
        grace: Duration::from_secs(5),
        stdin: stdin.to_vec(),
    };
    let mut tail: VecDeque<String> = VecDeque::new();
    let mut logged = 0usize;
    let module = p.module;
    let mut take = |stream: process::Stream, line: String| {
        if let Some(out) = stdout.as_deref_mut() {
            if stream == process::Stream::Stdout && out.len() < CAPTURED_LINES {
                out.push(line.clone());
            }
        }
        if logged < LOGGED_LINES {
            tracing::info!(module, stream = stream.name(), "{line}");
        }
        logged += 1;
        if tail.len() == KEPT_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    };
    if p.hide_args {
        let args = format!("{} (not shown)", p.args.len());
        tracing::info!(module, program = p.program, args, "running");
    } else {
        let args = quoted_args(p);
        tracing::info!(module, program = p.program, args, "running");
    }
    let finished = if live {
        process::run(&cmd, Output::Lines(&mut take), stop)
    } else {
        match process::Sandbox::new(root.path()) {
            Ok(sandbox) => process::run_sandboxed(&cmd, &sandbox, Output::Lines(&mut take), stop),
            Err(e) => return (RunEnd::Failed(format!("{}: {e}", p.module)), None),
        }
    };
    let what = format!("{}: {}", p.module, p.program);
    let last = || {
        if tail.is_empty() {
            String::new()
        } else {
            format!(
                "; its last output: {}",
                tail.iter().cloned().collect::<Vec<_>>().join(" | ")
            )
        }
    };
    let exit_status = match &finished {
        Ok(f) => match f.ended {
            Ended::Exited(code) => Some(code),
            _ => None,
        },
        Err(_) => None,
    };
    let end = match finished {
        Err(e) => RunEnd::Failed(format!("{what} could not be started: {e}")),
        Ok(f) => match f.ended {
            Ended::Exited(0) => RunEnd::Succeeded,
            Ended::Exited(code) => {
                RunEnd::Failed(format!("{what} exited with status {code}{}", last()))
            }
            Ended::Signalled(sig) => {
                RunEnd::Failed(format!("{what} was killed by signal {sig}{}", last()))
            }
            Ended::TimedOut => RunEnd::Failed(format!(
                "{what} ran longer than {} s and was stopped{}",
                p.timeout.as_secs(),
                last()
            )),
            Ended::Stopped => RunEnd::Interrupted,
        },
    };
    (end, exit_status)
}

/// Runs each program in turn, stopping at the first that does not succeed.
pub(crate) fn run_all(root: &Root, programs: &[Program], stop: &AtomicBool) -> RunEnd {
    for p in programs {
        match run(root, p, stop) {
            RunEnd::Succeeded => {}
            other => return other,
        }
    }
    RunEnd::Succeeded
}
