//! `acc2omp man`: one manual page for the command and its subcommands (clap_mangen renders
//! the synopses and options; the sections a manual page has besides are written here).

use super::args::Cli;
use clap::CommandFactory;

/// The page, in roff.
pub fn page() -> Result<Vec<u8>, std::io::Error> {
    let mut cmd = Cli::command();
    cmd.build();
    let top = clap_mangen::Man::new(cmd.clone());
    let mut out = Vec::new();
    top.render_title(&mut out)?;
    out.extend_from_slice(b".SH NAME\n");
    section_body(&top, &mut out, |m, w| m.render_name_section(w))?;
    let subs: Vec<clap::Command> = cmd
        .get_subcommands()
        .filter(|s| s.get_name() != "help")
        .map(|s| s.clone().bin_name(format!("acc2omp {}", s.get_name())))
        .collect();
    out.extend_from_slice(b".SH SYNOPSIS\n");
    for (k, s) in subs.iter().enumerate() {
        if k > 0 {
            out.extend_from_slice(b".br\n");
        }
        section_body(&clap_mangen::Man::new(s.clone()), &mut out, |m, w| {
            m.render_synopsis_section(w)
        })?;
    }
    out.extend_from_slice(DESCRIPTION.as_bytes());
    out.extend_from_slice(b".SH COMMANDS\n");
    for s in &subs {
        let name = s.get_bin_name().unwrap_or_default();
        out.extend_from_slice(format!(".SS \"{name}\"\n").as_bytes());
        let about = s.get_long_about().or(s.get_about()).map(|a| a.to_string());
        out.extend_from_slice(escape(&about.unwrap_or_default()).as_bytes());
        out.extend_from_slice(b"\n");
        section_body(&clap_mangen::Man::new(s.clone()), &mut out, |m, w| {
            m.render_options_section(w)
        })?;
    }
    out.extend_from_slice(SECTIONS.as_bytes());
    let version = format!(".SH VERSION\n{}\n", env!("CARGO_PKG_VERSION"));
    out.extend_from_slice(version.as_bytes());
    Ok(out)
}

/// What `render` writes for one section, without clap_mangen's preamble and section heading.
fn section_body(
    man: &clap_mangen::Man,
    out: &mut Vec<u8>,
    render: impl Fn(&clap_mangen::Man, &mut Vec<u8>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut section = Vec::new();
    render(man, &mut section)?;
    let text = String::from_utf8_lossy(&section);
    for line in text.lines() {
        if line.starts_with(".ie \\n(.g")
            || line.starts_with(".el .ds Aq")
            || line.starts_with(".SH")
        {
            continue;
        }
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    Ok(())
}

/// Text as a roff line: a leading `.` or `'` would be a request, `\` an escape.
fn escape(text: &str) -> String {
    let t = text.replace('\\', "\\e").replace('-', "\\-");
    if t.starts_with(['.', '\'']) {
        format!("\\&{t}")
    } else {
        t
    }
}

const DESCRIPTION: &str = r#".SH DESCRIPTION
\fBacc2omp\fR migrates OpenACC C/C++ source trees to OpenMP offload the way clang\-tidy
applies fixes: it finds every OpenACC directive, decides the equivalent OpenMP, and
rewrites only the bytes that must change. Comments, macros, formatting, continuation lines
and line endings survive. Where no exact mapping exists the directive is left unchanged
with an error, or translated with a warning that says what differs.
.PP
Without a mode flag, \fBmigrate\fR prints diagnostics and a summary; \fB\-\-diff\fR prints a
unified diff, \fB\-\-write\fR rewrites files atomically, \fB\-\-check\fR lists the files that
would change. Each file is translated with its nearest \fIacc2omp.toml\fR. Facts about
types and statements come from libclang when it can be loaded, with the flags of
\fIcompile_commands.json\fR, and from syntax otherwise.
"#;

const SECTIONS: &str = r#".SH EXIT STATUS
.TP
.B 0
Nothing to change, or everything done.
.TP
.B 1
\fB\-\-diff\fR or \fB\-\-check\fR found changes, or an error was reported
(\fB\-\-exit\-zero\fR makes both 0).
.TP
.B 2
Bad usage, an unknown rule id, a malformed configuration or compilation database, a fatal
I/O error, or a \fB\-\-require\-clang\fR failure (also with \fB\-\-exit\-zero\fR).
.PP
When the reader of its output goes away (\fBacc2omp rules | head\fR), acc2omp ends quietly
by SIGPIPE, as other commands do; the shell reports status 141.
.SH ENVIRONMENT
.TP
.B ACC2OMP_CACHE_DIR
The result cache's directory, when neither \fB\-\-cache\-dir\fR nor \fBcache\-dir\fR in
\fIacc2omp.toml\fR names one.
.TP
.B ACC2OMP_NO_CACHE
Set (to anything but \fB0\fR, \fBfalse\fR or \fBno\fR): as \fB\-\-no\-cache\fR.
.TP
.B ACC2OMP_CACHE_MAX_SIZE
The cache's size limit in bytes, or with a \fBK\fR, \fBM\fR or \fBG\fR suffix (default 512M).
.TP
.B XDG_CACHE_HOME
The default cache is \fI$XDG_CACHE_HOME/acc2omp\fR.
.TP
.B LIBCLANG_PATH
The libclang library, or a directory holding it, to try first.
.TP
.B ACC2OMP_CLANG_TIMEOUT
Seconds one file's libclang parse may take (default 120); past it, the file is translated
from syntax alone.
.TP
.B NO_COLOR
Set: no colour, unless \fB\-\-color always\fR.
.SH FILES
.TP
.I acc2omp.toml
The configuration of the files in its directory and below (the nearest one applies;
\fBextend = "../acc2omp.toml"\fR builds on another): options under the names of their long
flags, \fBrules\fR, \fBselect\fR, \fBignore\fR, \fBexclude\fR, \fBper\-file\-ignores\fR and
rules\-file tables.
.TP
.I compile_commands.json
Compile flags for libclang: \fB\-p\fR (or \fBcompile\-commands\fR in \fIacc2omp.toml\fR) names
it or its directory; otherwise it is looked for in each file's parent directories.
.TP
.IR .gitignore ", " .ignore
Paths a directory walk skips, as git and ripgrep read them.
.TP
.I ~/.cache/acc2omp/
The result cache (\fI$XDG_CACHE_HOME/acc2omp\fR when set): translations kept by content,
configuration, flags, headers and version; \fBacc2omp clean\fR removes it.
.SH EXAMPLES
Review the migration of a tree, then apply it:
.PP
.RS
.nf
acc2omp migrate src \-\-diff
acc2omp migrate src \-\-write
.fi
.RE
.PP
A CMake project, with its compilation database in \fIbuild/\fR, annotating a pull request:
.PP
.RS
.nf
cmake \-S . \-B build \-DCMAKE_EXPORT_COMPILE_COMMANDS=ON
acc2omp migrate \-\-check \-\-require\-clang \-p build \-\-output\-format github
.fi
.RE
.PP
Keep both versions while the team still builds with OpenACC, and explain a rule:
.PP
.RS
.nf
acc2omp migrate src \-\-write \-\-emit dual
acc2omp explain implicit\-pointer
.fi
.RE
"#;
