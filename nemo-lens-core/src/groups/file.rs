//! Spec files: groups in JSON with Lens's field names,
//! `{"groups": {"GROUP": [{"key", "name", "kind", "unit", "description"}, ..]}}`,
//! plus the optional `buckets`, `attributes`, `static_attributes` and
//! `unit_in_name` a derive declaration can also say.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::check::{check_into, Problems, Rule, SpecError};
use super::registry::register_metric_group;
use super::spec::{MetricKind, MetricSpec};

/// Groups read from (or written to) a spec file, in file order. A group
/// name given twice in one file keeps its last definition, as JSON objects
/// do.
#[derive(Debug, Clone, Default)]
pub struct SpecFile {
    /// Each group's name and specs.
    pub groups: Vec<(String, Vec<MetricSpec>)>,
}

/// Why a spec file was refused: unreadable, not JSON, not a spec file, or
/// groups whose specs break the rules (every problem of every group). Each
/// names the file [`SpecFile::load`] read (text given to
/// [`SpecFile::from_json`] has no file to name).
///
/// `Display` says what is wrong and where (a JSON error's line and column
/// too); the cause behind it, the operating system's or the JSON parser's
/// error, comes from `source()` (never both, so chain printers show each
/// once), and `Debug` prints the message with its cause, so
/// `fn main() -> Result<..>` shows that sentence rather than a struct.
pub enum SpecFileError {
    /// The file could not be read.
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The text is not JSON.
    Json {
        /// The file; `None` for text given to [`SpecFile::from_json`].
        path: Option<PathBuf>,
        /// The parser's error, with the line and column.
        source: serde_json::Error,
    },
    /// The JSON is not a spec file.
    Shape {
        /// The file; `None` for text given to [`SpecFile::from_json`].
        path: Option<PathBuf>,
        /// What a spec file looks like.
        expected: &'static str,
    },
    /// Groups refused, each with every problem.
    Specs {
        /// The file; `None` for text given to [`SpecFile::from_json`].
        path: Option<PathBuf>,
        /// Each refused group.
        errors: Vec<SpecError>,
    },
}

impl SpecFileError {
    /// The file refused; `None` for text given to [`SpecFile::from_json`].
    pub fn path(&self) -> Option<&Path> {
        match self {
            SpecFileError::Read { path, .. } => Some(path),
            SpecFileError::Json { path, .. }
            | SpecFileError::Shape { path, .. }
            | SpecFileError::Specs { path, .. } => path.as_deref(),
        }
    }

    fn in_file(mut self, file: &Path) -> Self {
        match &mut self {
            SpecFileError::Read { .. } => {}
            SpecFileError::Json { path, .. }
            | SpecFileError::Shape { path, .. }
            | SpecFileError::Specs { path, .. } => *path = Some(file.to_owned()),
        }
        self
    }
}

impl fmt::Display for SpecFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = match self.path() {
            Some(path) => format!("spec file {}", path.display()),
            None => "spec file".to_owned(),
        };
        match self {
            SpecFileError::Read { .. } => write!(f, "cannot read {file}"),
            SpecFileError::Json { source, .. } => {
                write!(f, "{file} is not valid JSON")?;
                // Zero when the parser has no position to give.
                if source.line() > 0 {
                    write!(f, " at line {}, column {}", source.line(), source.column())?;
                }
                Ok(())
            }
            SpecFileError::Shape { path, expected } => match path {
                Some(path) => write!(f, "{} is not a spec file: {expected}", path.display()),
                None => write!(f, "not a spec file: {expected}"),
            },
            SpecFileError::Specs { path, errors } => {
                for (i, error) in errors.iter().enumerate() {
                    if i > 0 {
                        writeln!(f)?;
                    }
                    if path.is_some() {
                        write!(f, "{file}: ")?;
                    }
                    write!(f, "{error}")?;
                }
                Ok(())
            }
        }
    }
}

crate::error_debug::debug_as_sentence!(SpecFileError);

impl std::error::Error for SpecFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SpecFileError::Read { source, .. } => Some(source),
            SpecFileError::Json { source, .. } => Some(source),
            SpecFileError::Shape { .. } | SpecFileError::Specs { .. } => None,
        }
    }
}

impl SpecFile {
    /// Reads and checks the spec file at `path`.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, SpecFileError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| SpecFileError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::from_json(&text).map_err(|error| error.in_file(path))
    }

    /// Parses and checks a spec file's text: every group's specs follow the
    /// derive's rules, or the error names each offending key and rule.
    pub fn from_json(text: &str) -> Result<Self, SpecFileError> {
        let document: Value = serde_json::from_str(text)
            .map_err(|source| SpecFileError::Json { path: None, source })?;
        let mut errors = Vec::new();
        let mut file = SpecFile::default();
        let Some(groups) = document.get("groups").and_then(Value::as_object) else {
            return Err(SpecFileError::Shape {
                path: None,
                expected: "a spec file is an object with \"groups\": {\"GROUP\": [specs]}",
            });
        };
        for (group, specs) in groups {
            let mut problems = Problems::default();
            let parsed = parse_group(&mut problems, specs);
            // A group whose every spec failed to parse is not also "empty".
            if !parsed.is_empty() || problems.0.is_empty() {
                check_into(&mut problems, group, &parsed);
            }
            if problems.0.is_empty() {
                file.groups.push((group.clone(), parsed));
            } else {
                errors.push(SpecError {
                    group: group.clone(),
                    problems: problems.0,
                });
            }
        }
        if errors.is_empty() {
            Ok(file)
        } else {
            Err(SpecFileError::Specs { path: None, errors })
        }
    }

    /// The file as JSON text, in the format [`from_json`](Self::from_json)
    /// reads (and Lens's field names, for a Python process to build its
    /// `MetricSpec`s from).
    pub fn to_json(&self) -> String {
        let groups: Map<String, Value> = self
            .groups
            .iter()
            .map(|(group, specs)| (group.clone(), specs.iter().map(spec_json).collect()))
            .collect();
        let mut text =
            serde_json::to_string_pretty(&json!({ "groups": groups })).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Registers every group of the file in order, stopping at the first
    /// refused (a name already registered): the groups before it stay
    /// registered.
    pub fn register(&self) -> Result<(), SpecError> {
        for (group, specs) in &self.groups {
            register_metric_group(group, specs.iter().cloned())?;
        }
        Ok(())
    }
}

fn spec_json(spec: &MetricSpec) -> Value {
    let mut object = Map::new();
    object.insert("key".into(), json!(spec.key));
    object.insert("name".into(), json!(spec.name));
    object.insert("kind".into(), json!(spec.kind.as_str()));
    object.insert("unit".into(), json!(spec.unit));
    object.insert("description".into(), json!(spec.description));
    if let Some(buckets) = &spec.buckets {
        object.insert("buckets".into(), json!(buckets));
    }
    if !spec.attributes.is_empty() {
        object.insert("attributes".into(), json!(spec.attributes));
    }
    if !spec.static_attributes.is_empty() {
        let statics: Map<String, Value> = spec
            .static_attributes
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        object.insert("static_attributes".into(), Value::Object(statics));
    }
    if spec.unit_in_name {
        object.insert("unit_in_name".into(), json!(true));
    }
    Value::Object(object)
}

const FIELDS: [&str; 9] = [
    "key",
    "name",
    "kind",
    "unit",
    "description",
    "buckets",
    "attributes",
    "static_attributes",
    "unit_in_name",
];

fn parse_group(problems: &mut Problems, specs: &Value) -> Vec<MetricSpec> {
    let Some(specs) = specs.as_array() else {
        problems.push("", Rule::Field, "a group is a list of specs");
        return Vec::new();
    };
    specs
        .iter()
        .enumerate()
        .filter_map(|(index, spec)| parse_spec(problems, index, spec))
        .collect()
}

fn parse_spec(problems: &mut Problems, index: usize, spec: &Value) -> Option<MetricSpec> {
    let Some(object) = spec.as_object() else {
        problems.push(
            &format!("#{index}"),
            Rule::Field,
            "a spec is an object with \"key\", \"name\" and \"kind\"",
        );
        return None;
    };
    let label = object
        .get("key")
        .and_then(Value::as_str)
        .map_or_else(|| format!("#{index}"), str::to_owned);
    let mut text = |field: &str, required: bool| -> Option<String> {
        match object.get(field) {
            Some(Value::String(s)) => Some(s.clone()),
            None if !required => Some(String::new()),
            None => {
                problems.push(&label, Rule::Field, format!("\"{field}\" is missing"));
                None
            }
            Some(other) => {
                problems.push(
                    &label,
                    Rule::Field,
                    format!("\"{field}\" must be a string, not {other}"),
                );
                None
            }
        }
    };
    let key = text("key", true);
    let name = text("name", true);
    let kind_name = text("kind", false);
    let unit = text("unit", false);
    let description = text("description", false);
    for field in object.keys() {
        if !FIELDS.contains(&field.as_str()) {
            problems.push(
                &label,
                Rule::Field,
                format!(
                    "unknown field \"{field}\"; a spec has {}",
                    FIELDS.map(|f| format!("\"{f}\"")).join(", ")
                ),
            );
        }
    }
    // A kind that is not even a string was reported: checking the spec as
    // some default kind would only add wrong problems.
    let kind_name = match kind_name? {
        // Lens's default kind.
        k if k.is_empty() => "gauge".to_owned(),
        k => k,
    };
    let kind = MetricKind::from_name(&kind_name);
    if kind.is_none() {
        problems.push(
            &label,
            Rule::Kind,
            format!(
                "kind \"{kind_name}\" is not one of {}",
                MetricKind::ALL.map(|k| format!("\"{k}\"")).join(", ")
            ),
        );
    }
    let mut spec = MetricSpec::new(key?, name?, kind?)
        .unit(unit?)
        .description(description?);
    match object.get("buckets") {
        None => {}
        Some(Value::Array(values)) if values.iter().all(Value::is_number) => {
            spec.buckets = Some(values.iter().filter_map(Value::as_f64).collect());
        }
        Some(other) => problems.push(
            &label,
            Rule::Field,
            format!("\"buckets\" must be a list of numbers, not {other}"),
        ),
    }
    match object.get("attributes") {
        None => {}
        Some(Value::Array(keys)) if keys.iter().all(Value::is_string) => {
            spec.attributes = keys
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
        }
        Some(other) => problems.push(
            &label,
            Rule::Field,
            format!("\"attributes\" must be a list of attribute keys, not {other}"),
        ),
    }
    match object.get("static_attributes") {
        None => {}
        Some(Value::Object(pairs)) if pairs.values().all(Value::is_string) => {
            spec.static_attributes = pairs
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                .collect();
        }
        Some(other) => problems.push(
            &label,
            Rule::Field,
            format!("\"static_attributes\" must map keys to strings, not {other}"),
        ),
    }
    match object.get("unit_in_name") {
        None => {}
        Some(Value::Bool(keep)) => spec.unit_in_name = *keep,
        Some(other) => problems.push(
            &label,
            Rule::Field,
            format!("\"unit_in_name\" must be true or false, not {other}"),
        ),
    }
    Some(spec)
}
