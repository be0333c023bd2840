//! `shipshape init`: writes a commented starter `shipshape.yaml` and the spec's JSON
//! schema beside it, never over an existing file.

use crate::commands::{CommandError, Exit};
use crate::spec::starter::{
    name_from_folder, parse_classes, starter_spec, DEFAULT_CLASSES, SCHEMA_FILE,
};
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::Path;

/// Creates `path` with `text`; an existing file is left alone (`Ok(false)`), even one
/// that appears between a check and the write.
fn create_new(path: &Path, text: &str) -> Result<bool, CommandError> {
    let write_error = |source| CommandError::Write {
        path: path.display().to_string(),
        source,
    };
    let mut file = match OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(write_error(e)),
    };
    if let Err(e) = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
    {
        // A half-written file of ours is no starting point.
        let _ = std::fs::remove_file(path);
        return Err(write_error(e));
    }
    Ok(true)
}

/// `shipshape init [--name N] [--classes api,worker,migrate]`.
pub fn init(
    spec_path: &Path,
    name: Option<&str>,
    classes: Option<&str>,
) -> Result<Exit, CommandError> {
    let classes = match classes {
        Some(arg) => parse_classes(arg)?,
        None => DEFAULT_CLASSES.to_vec(),
    };
    let folder = spec_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = match name {
        Some(n) => n.to_string(),
        None => {
            let absolute = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
            let base = absolute
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            name_from_folder(&base)
        }
    };
    let text = starter_spec(&name, &classes)?;
    // The starter must load as a spec; a failure here is a bug in the template.
    crate::spec::load_spec(&text, &spec_path.display().to_string())?;
    if spec_path.exists() {
        return Err(CommandError::Exists {
            path: spec_path.display().to_string(),
        });
    }
    if !create_new(spec_path, &text)? {
        return Err(CommandError::Exists {
            path: spec_path.display().to_string(),
        });
    }
    println!("wrote {}", spec_path.display());
    let schema_path = spec_path.with_file_name(SCHEMA_FILE);
    let schema = crate::backends::helm::pretty_json(&crate::contract::schema::spec_schema());
    if create_new(&schema_path, &schema)? {
        println!(
            "wrote {} (the schema the modeline names)",
            schema_path.display()
        );
    } else {
        eprintln!(
            "kept the existing {}; refresh it with `shipshape schema > {}`",
            schema_path.display(),
            schema_path.display()
        );
    }
    println!("next: shipshape --spec {} generate", spec_path.display());
    Ok(Exit::Ok)
}
