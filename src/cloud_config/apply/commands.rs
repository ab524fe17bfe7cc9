//! `bootcmd` and `runcmd`: the entries made into one shell script as cloud-init's
//! `shellify` makes it (a string entry verbatim, a list entry's words each single-quoted).
//! `bootcmd`'s is written into the instance's directory and run here with the root's
//! `/bin/sh` and `INSTANCE_ID` in its environment, as cloud-init's `cc_bootcmd`; `runcmd`'s
//! is one of the scripts `scripts_user` runs ([`super::scripts`]).

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::cloud_config::commands::Command;
use crate::root::Root;

use super::exec::{self, Program, RunEnd};

/// The shell the script runs with.
pub const SHELL: &str = "/bin/sh";

/// The script for `cmds`: `#!/bin/sh`, then one line per entry.
pub fn shellify(cmds: &[Command]) -> String {
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
pub fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// Writes `cmds` to `script` (a path inside the root, mode 0700) and runs it with `sh`.
pub fn run_commands(
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
    let program = Program {
        module,
        program: SHELL,
        args: vec![script.display().to_string()],
        env,
        timeout,
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
