//! `export`, `list` and `find` given `--db postgres://…`: the same output, read from a server
//! that `push` filled.

use super::discover::{FindArgs, ListArgs};
use super::export::Args as ExportArgs;
use super::output;
use super::output::outln;
use anyhow::{bail, Context};
use sessiondb::discovery::SessionInfo;
use sessiondb::internals::layout;
use sessiondb::json::Value;

fn resolved(p: &str) -> String {
    layout::resolve_path(p).to_string_lossy().into_owned()
}

pub fn run_export(url: &str, args: ExportArgs) -> anyhow::Result<i32> {
    let mut server = sessiondb::pg::connect(url)?;
    if args.all {
        let Some(out) = args.out else { bail!("--all needs --out DIR") };
        let bar = output::progress_bar(0, "exporting");
        let files = sessiondb::pg::export_all(&mut server, &out, |f| {
            bar.set_message(f.path.display().to_string());
            bar.inc(1);
        })?;
        bar.finish_and_clear();
        if args.json {
            output::print_json(&files)?;
        } else {
            let bytes: u64 = files.iter().map(|f| f.bytes).sum();
            outln!("exported {} sessions ({} bytes) to {}", files.len(), bytes, out.display())?;
        }
        return Ok(0);
    }
    let reference = args.session.context("a SESSION or --all is required")?;
    let session = sessiondb::pg::resolve(&mut server, &reference)?;
    match args.output {
        Some(path) => {
            let bytes = sessiondb::pg::write_session_file(&mut server, session.skey, &path)?;
            if args.json {
                output::print_json(&serde_json::json!({"sessionId": session.id, "path": path, "bytes": bytes}))?;
            }
        }
        None => output::to_stdout(|w| sessiondb::pg::write_session(&mut server, session.skey, w))?,
    }
    Ok(0)
}

pub fn run_list(url: &str, a: ListArgs) -> anyhow::Result<i32> {
    let mut server = sessiondb::pg::connect(url)?;
    let mut infos: Vec<SessionInfo> = match (&a.scope.cwd, &a.scope.session_dir) {
        (Some(cwd), _) => sessiondb::pg::list_cwd(&mut server, &resolved(cwd))?,
        (None, Some(dir)) => sessiondb::pg::list_dir(&mut server, &resolved(dir))?,
        (None, None) => sessiondb::pg::list_everything(&mut server)?,
    };
    super::discover::select(&mut infos, &a);
    if a.json {
        sessiondb::pg::fill_all_text(&mut server, &mut infos)?;
        output::print_pi_json(&Value::Array(infos.iter().map(SessionInfo::to_value).collect()))?;
    } else {
        super::discover::print_table(&infos)?;
    }
    Ok(0)
}

pub fn run_find(url: &str, a: FindArgs) -> anyhow::Result<i32> {
    let mut server = sessiondb::pg::connect(url)?;
    let scoped = match (&a.scope.cwd, &a.scope.session_dir) {
        (Some(cwd), _) => Some(sessiondb::pg::find_in_dir(
            &mut server,
            &a.id,
            &sessiondb::discovery::session_dir_for(cwd, None),
            None,
        )?),
        (None, Some(dir)) => Some(sessiondb::pg::find_in_dir(&mut server, &a.id, &resolved(dir), None)?),
        (None, None) => None,
    };
    if let Some(found) = scoped {
        if a.json {
            outln!("{}", found.as_deref().map_or_else(|| "null".into(), sessiondb::json::quote))?;
        } else if let Some(p) = &found {
            outln!("{p}")?;
        }
        return Ok(if found.is_some() { 0 } else { 1 });
    }
    let exact = sessiondb::pg::find_everywhere(&mut server, &a.id)?;
    let paths = if exact.is_empty() && a.id.chars().count() >= sessiondb::resolve::MIN_PREFIX {
        sessiondb::pg::find_prefix(&mut server, &a.id)?
    } else {
        exact
    };
    if a.json {
        output::print_pi_json(&Value::Array(paths.iter().map(|p| Value::String(p.as_str().into())).collect()))?;
    } else {
        for p in &paths {
            outln!("{p}")?;
        }
    }
    Ok(if paths.is_empty() { 1 } else { 0 })
}
