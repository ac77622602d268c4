//! Reading command words the way common tools do: options, operands, assignments.

/// Commands that run another command: (options taking a value, operands before it).
pub(crate) fn wrapper(name: &str) -> Option<(&'static [&'static str], usize)> {
    Some(match name {
        "sudo" | "doas" => (
            &[
                "-u",
                "-g",
                "-C",
                "-D",
                "-h",
                "-p",
                "-r",
                "-t",
                "-U",
                "-T",
                "-R",
                "--user",
                "--group",
                "--chdir",
                "--host",
                "--prompt",
                "--role",
                "--type",
                "--other-user",
                "--close-from",
                "--command-timeout",
                "--chroot",
            ],
            0,
        ),
        "nice" => (&["-n", "--adjustment"], 0),
        "ionice" => (&["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"], 0),
        "stdbuf" => (&["-i", "-o", "-e", "--input", "--output", "--error"], 0),
        "timeout" => (&["-s", "--signal", "-k", "--kill-after"], 1),
        "chroot" => (&["--userspec", "--groups"], 1),
        "chrt" | "taskset" => (&[], 1),
        "xargs" => (
            &[
                "-a",
                "-d",
                "-E",
                "-I",
                "-L",
                "-n",
                "-P",
                "-s",
                "--arg-file",
                "--delimiter",
                "--max-args",
                "--max-procs",
                "--max-chars",
                "--max-lines",
            ],
            0,
        ),
        _ => return None,
    })
}

/// `NAME=value` before a command.
pub(crate) fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The command name without its directory (`/usr/bin/rm` → `rm`).
pub(crate) fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// The arguments after the leading options; `with_value` options also take the next word.
pub(crate) fn skip_options<'a>(args: &'a [String], with_value: &[&str]) -> &'a [String] {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if arg == "--" {
            return args.get(i + 1..).unwrap_or_default();
        }
        if !arg.starts_with('-') || arg.len() == 1 {
            break;
        }
        i += if with_value.contains(&arg.as_str()) {
            2
        } else {
            1
        };
    }
    args.get(i..).unwrap_or_default()
}

/// The value of the first of `names` among the leading options (`-S x`, `-Sx`, `--name=x`).
pub(crate) fn option_value<'a>(args: &'a [String], names: &[&str]) -> Option<&'a str> {
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "--" {
            return None;
        }
        for name in names {
            if arg == name {
                return iter.next().map(String::as_str);
            }
            if let Some(value) = arg.strip_prefix(name) {
                let value = if name.starts_with("--") {
                    value.strip_prefix('=')
                } else {
                    Some(value)
                };
                if let Some(value) = value {
                    return Some(value);
                }
            }
        }
    }
    None
}

/// The script of `sh -c SCRIPT` (also `-lc`, `-ec`, `-o pipefail -c`).
pub(crate) fn shell_script(args: &[String]) -> Option<&str> {
    let mut has_c = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if arg == "--" {
            i += 1;
            break;
        }
        let is_option = (arg.starts_with('-') || arg.starts_with('+')) && arg.len() > 1;
        if !is_option {
            break;
        }
        if matches!(
            arg.as_str(),
            "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file"
        ) {
            i += 2;
            continue;
        }
        if !arg.starts_with("--") && arg[1..].contains('c') {
            has_c = true;
        }
        i += 1;
    }
    if has_c {
        args.get(i).map(String::as_str)
    } else {
        None
    }
}
