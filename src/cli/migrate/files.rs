//! Reading and translating the inputs: files in parallel (a file that ran past the memory
//! limit beside others is translated again alone), standard input up to the size limit.

use super::FileResult;
use crate::cache::Cache;
use crate::cli::settings::Settings;
use crate::diag::Located;
use crate::engine::migrate_bytes;
use crate::rules::id;
use crate::semantic;
use crate::walk::{self, Input, Stamp};
use rayon::prelude::*;
use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::sync::Arc;

pub(super) fn process(
    display: String,
    input: Option<Input>,
    read: std::io::Result<(Vec<u8>, Option<Stamp>)>,
    settings: Arc<Settings>,
    cache: Option<&Cache>,
) -> FileResult {
    let mut r = FileResult {
        display,
        input,
        original: Vec::new(),
        stamp: None,
        outcome: None,
        diags: Vec::new(),
        settings,
        retry: false,
    };
    let (opts, sem) = (&r.settings.opts, &r.settings.sem);
    match read {
        Ok((bytes, stamp)) => (r.original, r.stamp) = (bytes, stamp),
        Err(e) if e.kind() == std::io::ErrorKind::FileTooLarge => {
            let why = format!(
                "file is {e} on a file's size; it is skipped (memory use grows with the size: raise the limit with --max-file-size MIB)"
            );
            r.diags.push(Located::file(
                &opts.tables,
                &r.display,
                id::FILE_TOO_LARGE,
                why,
            ));
            return r;
        }
        Err(e) => {
            let why = format!("cannot read file: {e}; it is skipped");
            r.diags
                .push(Located::file(&opts.tables, &r.display, id::IO_ERROR, why));
            return r;
        }
    }
    let name = match &r.input {
        Some(i) => Some(i.target.clone()),
        None => (r.display != "<stdin>").then(|| PathBuf::from(&r.display)),
    };
    // A file (not standard input) may have its translation kept from an earlier run.
    let key = match (cache, &r.input) {
        (Some(c), Some(i)) => {
            let db = sem.compile_commands.as_deref();
            let (flags, found) = semantic::compile_flags_for(Some(&i.target), db);
            let k = c.key(
                r.settings.fingerprint(),
                &flags,
                found,
                &i.target,
                &r.original,
            );
            Some((c, k))
        }
        _ => None,
    };
    let kept = key
        .as_ref()
        .and_then(|(c, k)| c.get(k, &r.original, &opts.tables));
    let result = match kept {
        Some(out) => Ok(Ok(out)),
        None => crate::memory::guard(|| {
            let out = migrate_bytes(&r.original, name.as_deref(), opts, sem);
            if let (Some((c, k)), Ok(o)) = (&key, &out) {
                c.put(k, &r.original, o, &opts.tables);
            }
            out
        }),
    };
    match result {
        Ok(Ok(out)) => {
            r.diags = out
                .diagnostics
                .iter()
                .map(|d| Located::from(&r.display, &out.index, d))
                .collect();
            r.outcome = Some(out);
        }
        Ok(Err(d)) => r
            .diags
            .push(Located::file(&opts.tables, &r.display, d.rule, d.message)),
        Err(over) if over.too_long => r.diags.push(Located::file(
            &opts.tables,
            &r.display,
            id::FILE_TOO_LARGE,
            "the file or its translation is 4 GiB or more (or has a Fortran token of 256 MiB or more), longer than acc2omp reads; it is skipped",
        )),
        Err(over) if !over.alone => r.retry = true,
        Err(_) => {
            let limit = walk::size_text(crate::memory::limit() as u64);
            let why = format!(
                "translating it needs more than the {limit} the run may hold; it is skipped (raise the limit with --max-memory MIB)"
            );
            r.diags.push(Located::file(
                &opts.tables,
                &r.display,
                id::FILE_TOO_LARGE,
                why,
            ));
        }
    }
    r
}

/// `r`, translated again (alone: the memory of the files translated beside it the first
/// time is free now).
fn again(r: FileResult, cache: Option<&Cache>) -> FileResult {
    let read = Ok((r.original, r.stamp));
    process(r.display, r.input, read, r.settings, cache)
}

/// Read and translate the files in parallel (a progress bar on a terminal).
pub(super) fn translate_files(
    files: Vec<(Option<Input>, Arc<Settings>)>,
    jobs: Option<usize>,
    limit: u64,
    cache: Option<&Cache>,
) -> Result<Vec<FileResult>, rayon::ThreadPoolBuildError> {
    let jobs = jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .max(2)
    });
    // Every recursive reading is bounded well within 2 MiB; 8 MiB (address space only, as
    // a main thread's) leaves a margin for hostile inputs on any build.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .stack_size(8 << 20)
        .build()?;
    let bar = (std::io::stderr().is_terminal() && files.len() > 1).then(|| {
        let b = indicatif::ProgressBar::new(files.len() as u64);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} files {msg}")
        {
            b.set_style(style);
        }
        b
    });
    let results = pool.install(|| {
        let first: Vec<FileResult> = files
            .into_par_iter()
            .filter_map(|(f, settings)| {
                let f = f?;
                let read = walk::read(&f.target, limit).map(|(b, s)| (b, Some(s)));
                let r = process(walk::display(&f.name), Some(f), read, settings, cache);
                if let Some(b) = bar.as_ref().filter(|_| !r.retry) {
                    b.inc(1);
                }
                Some(r)
            })
            .collect();
        // Files that went past the memory limit beside others: one at a time now.
        first
            .into_iter()
            .map(|r| {
                if !r.retry {
                    return r;
                }
                let r = again(r, cache);
                if let Some(b) = &bar {
                    b.inc(1);
                }
                r
            })
            .collect()
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(results)
}

/// Standard input, refused (`FileTooLarge`) above `limit` bytes: then with the bytes read so
/// far, which are echoed with the rest (an editor filter never empties its buffer).
pub(super) fn read_stdin(limit: u64) -> Result<Vec<u8>, (std::io::Error, Vec<u8>)> {
    let mut buf = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(limit.saturating_add(1))
        .read_to_end(&mut buf);
    match read {
        Err(e) => Err((e, Vec::new())),
        Ok(_) if buf.len() as u64 > limit => Err((
            std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                format!("more than the {} limit", walk::size_text(limit)),
            ),
            buf,
        )),
        Ok(_) => Ok(buf),
    }
}
