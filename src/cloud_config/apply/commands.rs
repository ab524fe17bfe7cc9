//! `bootcmd` and `runcmd`: the entries made into one shell script as cloud-init's
//! `shellify` makes it (a string entry verbatim, a list entry's words each single-quoted).
//! `bootcmd`'s is written into the instance's directory and run here with the root's
//! `/bin/sh` and `INSTANCE_ID` in its environment, as cloud-init's `cc_bootcmd`; `runcmd`'s
//! is one of the scripts `scripts_user` runs ([`super::scripts`]).
//!
//! A script of one list entry whose program is a file the shell would execute as it is
//! (not one of its builtins) is run without the shell ([`direct_program`]): the shell
//! would only start that program with those words, so the result is the same, with one
//! process fewer on the boot path (`[sh, -c, '...']`, the documented shape, needs two
//! shells otherwise).

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::cloud_config::commands::Command;
use crate::root::Root;

use super::exec::{self, Program, RunEnd};

/// The shell the script runs with.
pub(crate) const SHELL: &str = "/bin/sh";

/// The script for `cmds`: `#!/bin/sh`, then one line per entry.
pub(crate) fn shellify(cmds: &[Command]) -> String {
    let mut s = String::from("#!/bin/sh\n");
    for c in cmds {
        match c {
            Command::Shell(line) => s.push_str(line),
            Command::Argv(words) => {
                let quoted: Vec<String> = words.iter().map(|w| quote(w)).collect();
                s.push_str(&quoted.join(" "));
            }
        }
        s.push('\n');
    }
    s
}

/// A word in single quotes, a `'` in it written `'\''`.
pub(crate) fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// The builtins of dash and bash (the `/bin/sh` of Debian and of RHEL): a word the
/// shell runs itself even quoted, where a program of the same name may differ (dash's
/// `echo` reads backslash escapes, coreutils' does not).
const SHELL_BUILTINS: &str = ". : [ alias bg bind break builtin caller cd chdir command \
    compgen complete compopt continue declare dirs disown echo enable eval exec exit export \
    false fc fg getopts hash help history jobs kill let local logout mapfile popd printf \
    pushd pwd read readarray readonly return set shift shopt source suspend test times trap \
    true type typeset ulimit umask unalias unset wait";

/// The words of `cmds` when it is exactly one list entry, which a script would run as
/// its only command.
pub(crate) fn single_argv(cmds: &[Command]) -> Option<&[String]> {
    match cmds {
        [Command::Argv(words)] if !words.is_empty() => Some(words),
        _ => None,
    }
}

/// The program (a path inside the root) and arguments that run `words` as the shell
/// would run its one command `'w0' 'w1' ...`, when that needs no shell: `w0` is not a
/// builtin, is an absolute path or found on `PATH` as the shell finds it, and is an
/// executable file the kernel runs itself (`#!` or ELF; the shell would read any other
/// file as a script). `None`: run the script with the shell, which also says why a
/// program is missing.
pub(crate) fn direct_program(root: &Root, words: &[String]) -> Option<(String, Vec<String>)> {
    let (name, args) = words.split_first()?;
    let program = if name.starts_with('/') {
        name.clone()
    } else if name.contains('/') || SHELL_BUILTINS.split_whitespace().any(|b| b == name) {
        return None;
    } else {
        crate::facts::which(root, name)?
    };
    let real = root.resolve(Path::new(&program), true).ok()?;
    let mut file = std::fs::File::open(&real).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return None;
    }
    let mut head = [0u8; 4];
    file.read_exact(&mut head).ok()?;
    (head.starts_with(b"#!") || head == *b"\x7fELF").then(|| (program, args.to_vec()))
}

/// Writes `cmds` to `script` (a path inside the root, mode 0700) and runs it with `sh`
/// (or, one list entry, its program without the shell: [`direct_program`]).
pub(crate) fn run_commands(
    root: &Root,
    module: &str,
    script: &Path,
    cmds: &[Command],
    env: Vec<(String, String)>,
    timeout: Duration,
    stop: &AtomicBool,
) -> RunEnd {
    if let Err(e) = root.write_file(script, shellify(cmds).as_bytes(), 0o700) {
        return RunEnd::Failed(format!(
            "{module}: writing its script {}: {e}",
            script.display()
        ));
    }
    let direct = single_argv(cmds).and_then(|words| direct_program(root, words));
    let hide_args = direct.is_some();
    let (program, args) =
        direct.unwrap_or_else(|| (SHELL.to_string(), vec![script.display().to_string()]));
    let program = Program {
        module,
        program: &program,
        args,
        env,
        timeout,
        hide_args,
    };
    exec::run(root, &program, stop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shellify_matches_cloud_init() {
        let cmds = [
            Command::Shell("echo $HOME > /x".into()),
            Command::Argv(vec!["ls".into(), "-l".into(), "/a b".into()]),
            Command::Argv(vec!["echo".into(), "it's".into()]),
        ];
        assert_eq!(
            shellify(&cmds),
            "#!/bin/sh\necho $HOME > /x\n'ls' '-l' '/a b'\n'echo' 'it'\\''s'\n"
        );
        assert_eq!(shellify(&[]), "#!/bin/sh\n");
    }

    /// Only a program the kernel runs itself, found as the shell finds it, and never a
    /// builtin, goes without the shell.
    #[test]
    fn which_single_commands_need_no_shell() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let bin = d.path().join("usr/bin");
        std::fs::create_dir_all(&bin).unwrap();
        for (name, body, mode) in [
            ("tool", b"#!/bin/sh\n".as_slice(), 0o755),
            ("elf", b"\x7fELF\x02\x01".as_slice(), 0o755),
            ("unmarked", b"echo hi\n".as_slice(), 0o755),
            ("tiny", b"#".as_slice(), 0o755),
            ("readonly", b"#!/bin/sh\n".as_slice(), 0o644),
            ("echo", b"#!/bin/sh\n".as_slice(), 0o755),
        ] {
            std::fs::write(bin.join(name), body).unwrap();
            std::fs::set_permissions(bin.join(name), std::fs::Permissions::from_mode(mode))
                .unwrap();
        }
        std::fs::create_dir(bin.join("dir")).unwrap();
        std::os::unix::fs::symlink("tool", bin.join("link")).unwrap();
        let root = Root::new(d.path()).unwrap();
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        type Case<'a> = (&'a [&'a str], Option<(&'a str, &'a [&'a str])>);
        let cases: &[Case] = &[
            (
                &["tool", "-x", "a b"],
                Some(("/usr/bin/tool", &["-x", "a b"])),
            ),
            (&["elf"], Some(("/usr/bin/elf", &[]))),
            (&["/usr/bin/tool", "y"], Some(("/usr/bin/tool", &["y"]))),
            (&["link"], Some(("/usr/bin/link", &[]))),
            // The shell reads a file without `#!` as a script of its own.
            (&["unmarked"], None),
            (&["tiny"], None),
            (&["readonly"], None),
            (&["dir"], None),
            // A builtin is the shell's even where a program has its name.
            (&["echo", "a\\tb"], None),
            (&["cd", "/"], None),
            (&["missing"], None),
            (&["/usr/bin/missing"], None),
            (&["usr/bin/tool"], None),
            (&["./tool"], None),
            (&[], None),
        ];
        for (argv, want) in cases {
            let got = direct_program(&root, &words(argv));
            let want = want.map(|(p, a)| (p.to_string(), words(a)));
            assert_eq!(got, want, "{argv:?}");
        }
        let one = |c: &[Command]| single_argv(c).map(<[String]>::to_vec);
        assert_eq!(
            one(&[Command::Argv(words(&["a", "b"]))]),
            Some(words(&["a", "b"]))
        );
        assert_eq!(one(&[Command::Shell("a".into())]), None);
        assert_eq!(one(&[Command::Argv(vec![])]), None);
        assert_eq!(
            one(&[Command::Argv(words(&["a"])), Command::Argv(words(&["b"]))]),
            None
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// A list entry's words reach the program exactly, whatever they hold: the real
        /// shell reads the script and `printf` gives each word back.
        #[test]
        fn list_entries_survive_the_shell(words in proptest::collection::vec("[^\\x00]{0,12}", 1..5)) {
            let mut argv = vec!["printf".to_string(), "%s\\0".to_string()];
            argv.extend(words.iter().cloned());
            let script = shellify(&[Command::Argv(argv)]);
            let out = std::process::Command::new("/bin/sh")
                .arg("-c")
                .arg(&script)
                .output()
                .unwrap();
            let want: String = words.iter().map(|w| format!("{w}\0")).collect();
            proptest::prop_assert_eq!(String::from_utf8_lossy(&out.stdout), want);
        }
    }
}
