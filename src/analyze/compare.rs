//! Comparing traces the way Nsight Compute compares a result with its baselines: every metric
//! of every trace beside the baseline with the difference in %, and with several baselines the
//! difference to their mean and a z-score. Traces of different kernels or GPU configs may be
//! compared; what differs in their headers (config fields, launch shapes) is listed first so a
//! difference in the numbers is never mistaken for one in the experiment.
//!
//! Launches are paired by their index in each trace.
//!
//! The text names sections and metrics as the `analyze` text does ([`flat::section_title`],
//! [`flat::label`]); JSON and CSV keep the snake_case keys. [`Comparison::filtered`] keeps
//! only the rows a reader asked for (`compare --changed`, `--metric`).

use super::flat::{self, csv_field, Metric, Value};
use super::{analyze, Analysis, Taxonomy};
use crate::trace::{TraceError, TraceHeader, TraceReader};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// One trace of a comparison.
#[derive(Debug, Clone)]
pub struct Compared {
    /// How the trace is named in the tables: its file name, or as much of its path as tells
    /// it from the others compared ([`crate::trace_label::labels`]).
    pub label: String,
    pub header: TraceHeader,
    pub analysis: Analysis,
}

impl Compared {
    /// Reads and analyzes the trace at `path`, to be named `label` (its entry in
    /// [`crate::trace_label::labels`] of all the traces compared).
    pub fn load(path: &Path, label: String, taxonomy: Taxonomy) -> Result<Compared, TraceError> {
        let reader = TraceReader::open(path)?;
        let header = reader.header().clone();
        let analysis = analyze(reader, taxonomy)?;
        Ok(Compared {
            label,
            header,
            analysis,
        })
    }
}

/// A header field whose value is not the same in every trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeaderDifference {
    /// Dotted path, e.g. `config.scheduler.policy` or `launches.0.grid`.
    pub field: String,
    /// The value in each trace, in trace order; `null` where it is absent. (Text shows each
    /// as JSON text: `"gto"`, `207`.)
    pub values: Vec<serde_json::Value>,
}

/// One metric across the traces.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricRow {
    pub section: &'static str,
    pub metric: String,
    /// How the `analyze` text names the metric ([`flat::label`]).
    pub label: String,
    pub unit: &'static str,
    /// The value in each trace (numbers as numbers, the limiter as text); `null` if absent.
    pub values: Vec<Option<serde_json::Value>>,
    /// Mean of the baselines (numeric metrics only).
    pub baseline_mean: Option<f64>,
    /// Per trace: (value − baseline mean) / baseline mean × 100; `null` for the baselines,
    /// text metrics and a zero mean.
    pub diff_pct: Vec<Option<f64>>,
    /// Per trace: (value − mean) / standard deviation of the baselines; only with two or more
    /// baselines that differ.
    pub z_score: Vec<Option<f64>>,
}

/// The launches of the same index in every trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LaunchComparison {
    pub index: u32,
    /// The kernel name in each trace.
    pub names: Vec<Option<String>>,
    /// Whether each trace saw the launch complete (`null` where it has no such launch): an
    /// incomplete launch's figures stop where its run did, so its differences are no result.
    pub completed: Vec<Option<bool>>,
    pub metrics: Vec<MetricRow>,
    /// How many of the launch's metrics [`Comparison::filtered`] left out (absent in JSON when
    /// no filter was applied).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hidden: Option<usize>,
}

/// Which metrics a comparison keeps.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RowFilter {
    /// Only metrics whose value is not the same in every trace.
    pub changed: bool,
    /// Only metrics whose section, key or label contains one of these, ignoring case (none:
    /// every metric).
    pub metrics: Vec<String>,
}

impl RowFilter {
    /// True if the filter keeps every row.
    pub fn is_empty(&self) -> bool {
        !self.changed && self.metrics.is_empty()
    }

    /// Whether `row` contains `pattern` (lower case) in its section (key or title), key or
    /// label.
    fn matches(row: &MetricRow, pattern: &str) -> bool {
        [
            row.section,
            flat::section_title(row.section),
            &row.metric,
            &row.label,
        ]
        .iter()
        .any(|s| s.to_lowercase().contains(pattern))
    }

    /// Why the rows were hidden, for the text: `not matching --metric warp, or the same in
    /// every trace`.
    fn reason(&self) -> String {
        let mut why = Vec::new();
        if !self.metrics.is_empty() {
            why.push(format!("not matching --metric {}", self.metrics.join(",")));
        }
        if self.changed {
            why.push("the same in every trace (--changed)".to_string());
        }
        why.join(", or ")
    }
}

/// A `--metric` pattern that matches no metric of any launch.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "no metric matches `{pattern}`{} (patterns match part of a section, a metric's key or its label, ignoring case); the sections are: {}",
    match suggestions.as_slice() {
        [] => String::new(),
        words => format!(" (did you mean {}?)", words.iter().map(|w| format!("`{w}`")).collect::<Vec<_>>().join(" or ")),
    },
    sections.join(", ")
)]
pub struct NoMatch {
    pub pattern: String,
    /// The words of the metrics' keys nearest the pattern (a typo's likely meaning).
    pub suggestions: Vec<String>,
    /// The comparison's sections, `key (Title)`, in report order.
    pub sections: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Trace labels, baselines first.
    pub traces: Vec<String>,
    /// Per trace, what tells its run from the others' — GPU, policy, scoreboard, warp slots,
    /// other config fields (`lrr, ranges scoreboard`) — or its policy where nothing does: the
    /// run column of the text and HTML tables, in the words of the stalls chart's rows
    /// ([`super::caption`]).
    pub runs: Vec<String>,
    pub baselines: usize,
    /// Per trace, whether its run completed (a watchdog or a fault stops it early).
    pub complete: Vec<bool>,
    pub header_differences: Vec<HeaderDifference>,
    pub launches: Vec<LaunchComparison>,
    /// The rows kept ([`Comparison::filtered`]); absent in JSON when every row was.
    #[serde(skip_serializing_if = "RowFilter::is_empty")]
    pub filter: RowFilter,
}

impl Comparison {
    /// The comparison with only the metrics `filter` keeps: those matching one of its patterns
    /// (case-insensitive part of the section key or title, the metric's key or its label),
    /// then, with `changed`, those whose value is not the same in every trace. Each launch
    /// counts the rows it lost. A pattern that matches no metric of any launch is an error
    /// naming the sections, since it is most likely a typo; empty patterns are ignored.
    pub fn filtered(mut self, filter: &RowFilter) -> Result<Comparison, NoMatch> {
        let patterns: Vec<String> = filter
            .metrics
            .iter()
            .map(|p| p.trim().to_lowercase())
            .filter(|p| !p.is_empty())
            .collect();
        // Nothing to keep out: no count of hidden rows either.
        if patterns.is_empty() && !filter.changed {
            return Ok(self);
        }
        let rows = || self.launches.iter().flat_map(|l| &l.metrics);
        if let Some(p) = patterns
            .iter()
            .find(|p| !rows().any(|r| RowFilter::matches(r, p)))
        {
            let mut sections: Vec<&str> = Vec::new();
            for r in rows() {
                if !sections.contains(&r.section) {
                    sections.push(r.section);
                }
            }
            // The words keys are made of (`long`, `scoreboard`, `eligible`), and whole keys.
            let mut words: Vec<&str> = rows()
                .flat_map(|r| {
                    let key = r.metric.rsplit('.').next().unwrap_or(&r.metric);
                    std::iter::once(key).chain(key.split('_'))
                })
                .filter(|w| w.len() > 2)
                .collect();
            words.sort_unstable();
            words.dedup();
            // Closer than `nearest` asks for opcodes: a metric's words are short and many, and
            // `nope` is not a typo of `not`.
            let close = (p.chars().count() / 3).max(1);
            let suggestions = crate::asm::diag::nearest(p, words)
                .into_iter()
                .filter(|w| crate::asm::diag::edit_distance(p, &w.to_lowercase()) <= close)
                .map(str::to_string)
                .collect();
            return Err(NoMatch {
                pattern: p.clone(),
                suggestions,
                sections: sections
                    .into_iter()
                    .map(|s| format!("{s} ({})", flat::section_title(s)))
                    .collect(),
            });
        }
        let keep = |r: &MetricRow| {
            (patterns.is_empty() || patterns.iter().any(|p| RowFilter::matches(r, p)))
                && (!filter.changed || r.values.iter().any(|v| v != &r.values[0]))
        };
        for l in &mut self.launches {
            let before = l.metrics.len();
            l.metrics.retain(keep);
            l.hidden = Some(before - l.metrics.len() + l.hidden.unwrap_or(0));
        }
        self.filter = RowFilter {
            changed: self.filter.changed || filter.changed,
            metrics: self.filter.metrics.into_iter().chain(patterns).collect(),
        };
        Ok(self)
    }
}

fn flatten(prefix: &str, v: &serde_json::Value, out: &mut BTreeMap<String, serde_json::Value>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                flatten(&join(prefix, k), v, out);
            }
        }
        // Listings and their assembly or CUDA lines are long and differ whenever the kernel
        // does, which the kernel name (and the file, `asm_file`) says.
        serde_json::Value::Array(items)
            if !["listing", "asm_lines", "source_lines"]
                .iter()
                .any(|long| prefix.ends_with(long)) =>
        {
            for (i, v) in items.iter().enumerate() {
                flatten(&join(prefix, &i.to_string()), v, out);
            }
        }
        serde_json::Value::Array(_) => {}
        _ => {
            out.insert(prefix.to_string(), v.clone());
        }
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

/// Each launch's `params` as an object by parameter name where the header names them, so a
/// difference reads `launches.0.params.stride`, not `launches.0.params.2`.
fn name_params(header: &mut serde_json::Value) {
    let Some(launches) = header
        .get_mut("launches")
        .and_then(serde_json::Value::as_array_mut)
    else {
        return;
    };
    for launch in launches
        .iter_mut()
        .filter_map(serde_json::Value::as_object_mut)
    {
        let Some(serde_json::Value::Array(names)) = launch.remove("param_names") else {
            continue;
        };
        let Some(serde_json::Value::Array(values)) = launch.get("params") else {
            continue;
        };
        if names.len() != values.len() {
            continue;
        }
        let named: serde_json::Map<String, serde_json::Value> = names
            .iter()
            .zip(values)
            .map(|(n, v)| (n.as_str().unwrap_or_default().to_string(), v.clone()))
            .collect();
        launch.insert("params".into(), serde_json::Value::Object(named));
    }
}

/// Fields that describe the recording, not the experiment.
fn is_bookkeeping(field: &str) -> bool {
    matches!(field, "format" | "version" | "tool_version")
}

/// The fields of `headers` whose values are not the same in all of them, the recording's
/// bookkeeping (format, versions) left out.
pub fn header_differences(headers: &[&TraceHeader]) -> Vec<HeaderDifference> {
    let flat: Vec<BTreeMap<String, serde_json::Value>> = headers
        .iter()
        .map(|h| {
            let mut out = BTreeMap::new();
            let mut value = serde_json::to_value(h).expect("a header serializes");
            name_params(&mut value);
            flatten("", &value, &mut out);
            out
        })
        .collect();
    let mut fields: Vec<&String> = flat.iter().flat_map(|m| m.keys()).collect();
    fields.sort();
    fields.dedup();
    fields
        .into_iter()
        .filter(|f| !is_bookkeeping(f))
        .filter_map(|field| {
            let values: Vec<serde_json::Value> = flat
                .iter()
                .map(|m| m.get(field).cloned().unwrap_or(serde_json::Value::Null))
                .collect();
            let differs = values.iter().any(|v| v != &values[0]);
            differs.then(|| HeaderDifference {
                field: field.clone(),
                values,
            })
        })
        .collect()
}

fn json_value(v: &Value) -> serde_json::Value {
    match v {
        Value::Number(n) => serde_json::Number::from_f64(*n)
            .map_or(serde_json::Value::Null, serde_json::Value::Number),
        Value::Text(s) => serde_json::Value::String(s.clone()),
    }
}

fn compare_launch(index: usize, traces: &[Compared], baselines: usize) -> LaunchComparison {
    let launches: Vec<_> = traces
        .iter()
        .map(|t| t.analysis.launches.get(index))
        .collect();
    let per_trace: Vec<Vec<Metric>> = launches
        .iter()
        .map(|l| l.map(flat::metrics).unwrap_or_default())
        .collect();
    // Metric order: the first trace's, then any the others add.
    let mut order: Vec<&Metric> = Vec::new();
    for metrics in &per_trace {
        for m in metrics {
            if !order
                .iter()
                .any(|o| o.section == m.section && o.name == m.name)
            {
                order.push(m);
            }
        }
    }
    let metrics = order
        .into_iter()
        .map(|m| {
            let (section, name) = (m.section, &m.name);
            let values: Vec<Option<&Value>> = per_trace
                .iter()
                .map(|ms| {
                    ms.iter()
                        .find(|m| m.section == section && &m.name == name)
                        .map(|m| &m.value)
                })
                .collect();
            let base: Vec<f64> = values[..baselines]
                .iter()
                .filter_map(|v| v.and_then(Value::number))
                .collect();
            let mean = (!base.is_empty()).then(|| base.iter().sum::<f64>() / base.len() as f64);
            let sd = (base.len() >= 2).then(|| {
                let m = mean.unwrap_or(0.0);
                (base.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (base.len() - 1) as f64).sqrt()
            });
            let numbers: Vec<Option<f64>> =
                values.iter().map(|v| v.and_then(Value::number)).collect();
            let diff_pct = numbers
                .iter()
                .enumerate()
                .map(|(i, v)| match (i >= baselines, v, mean) {
                    (true, Some(v), Some(m)) if m != 0.0 => Some((v - m) / m * 100.0),
                    _ => None,
                })
                .collect();
            let z_score = numbers
                .iter()
                .map(|v| match (v, mean, sd) {
                    (Some(v), Some(m), Some(sd)) if sd > 0.0 => Some((v - m) / sd),
                    _ => None,
                })
                .collect();
            MetricRow {
                section,
                metric: name.clone(),
                label: m.label.clone(),
                unit: m.unit,
                values: values.iter().map(|v| v.map(json_value)).collect(),
                baseline_mean: mean,
                diff_pct,
                z_score,
            }
        })
        .collect();
    LaunchComparison {
        index: index as u32,
        names: launches.iter().map(|l| l.map(|l| l.name.clone())).collect(),
        completed: launches.iter().map(|l| l.map(|l| l.completed)).collect(),
        metrics,
        hidden: None,
    }
}

/// Compares `traces`, of which the first `baselines` (at least one) are the baselines.
pub fn compare(traces: &[Compared], baselines: usize) -> Comparison {
    let baselines = baselines.clamp(1, traces.len().max(1));
    let launches = traces
        .iter()
        .map(|t| t.analysis.launches.len())
        .max()
        .unwrap_or(0);
    let headers: Vec<&TraceHeader> = traces.iter().map(|t| &t.header).collect();
    Comparison {
        traces: traces.iter().map(|t| t.label.clone()).collect(),
        runs: super::caption::captions(&headers).distinctions,
        baselines,
        complete: traces.iter().map(|t| t.analysis.complete).collect(),
        header_differences: header_differences(&headers),
        launches: (0..launches)
            .map(|i| compare_launch(i, traces, baselines))
            .collect(),
        filter: RowFilter::default(),
    }
}

/// A cell's number, if it holds one.
fn number(v: &Option<serde_json::Value>) -> Option<f64> {
    v.as_ref().and_then(serde_json::Value::as_f64)
}

fn cell(v: &Option<serde_json::Value>) -> String {
    match v {
        None | Some(serde_json::Value::Null) => "-".into(),
        Some(serde_json::Value::Number(n)) => {
            let f = n.as_f64().unwrap_or(0.0);
            Value::Number(f).to_string()
        }
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// The comparison as text: the traces with what tells their runs apart, header differences,
/// then per launch one row per metric, under the `analyze` text's section titles and labels,
/// with each trace's value and, for the non-baselines, the difference to the baseline (mean);
/// after a filtered launch's rows, how many it hid.
pub fn render_text(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "warpscope compare — {} traces", c.traces.len());
    // A table as the report's: index, trace, run, role; columns as wide as their widest entry.
    let index = |i: usize| format!("[{i}]");
    let widest = |cells: &[String], head: &str| {
        cells
            .iter()
            .map(|s| s.chars().count())
            .fold(head.chars().count(), usize::max)
    };
    let iw = widest(&(0..c.traces.len()).map(index).collect::<Vec<_>>(), "");
    let tw = widest(&c.traces, "trace");
    let rw = widest(&c.runs, "run");
    let _ = writeln!(out, "  {:iw$}  {:tw$}  run", "", "trace");
    for (i, t) in c.traces.iter().enumerate() {
        let mut role = String::from(if i < c.baselines { "baseline" } else { "" });
        if !c.complete.get(i).copied().unwrap_or(true) {
            role = format!("{role} INCOMPLETE: its run stopped early")
                .trim()
                .to_string();
        }
        let run = c.runs.get(i).map_or("", String::as_str);
        let line = format!("  {:iw$}  {t:tw$}  {run:rw$}  {role}", index(i));
        let _ = writeln!(out, "{}", line.trim_end());
    }
    let _ = writeln!(out);
    if c.header_differences.is_empty() {
        let _ = writeln!(out, "Headers: identical (same GPU config and launches)");
    } else {
        let _ = writeln!(out, "Header differences:");
        // Columns as wide as their widest entry, so that each trace's values line up.
        let field_w = c.header_differences.iter().map(|d| d.field.len()).max();
        let mut value_w: Vec<usize> = Vec::new();
        let text = |d: &HeaderDifference| -> Vec<String> {
            d.values.iter().map(serde_json::Value::to_string).collect()
        };
        for d in &c.header_differences {
            for (i, v) in text(d).iter().enumerate() {
                match value_w.get_mut(i) {
                    Some(w) => *w = (*w).max(v.chars().count()),
                    None => value_w.push(v.chars().count()),
                }
            }
        }
        for d in &c.header_differences {
            let values: Vec<String> = text(d)
                .iter()
                .zip(&value_w)
                .map(|(v, &w)| format!("{v:<w$}"))
                .collect();
            let line = format!(
                "  {:<fw$} {}",
                d.field,
                values.join("  |  "),
                fw = field_w.unwrap_or(0)
            );
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }
    let w = 14;
    // Metric labels as wide as the longest, so that no value is pushed out of its column.
    let label_w = c
        .launches
        .iter()
        .flat_map(|l| &l.metrics)
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(0)
        .max(44);
    for l in &c.launches {
        let _ = writeln!(out);
        let names: Vec<_> = l
            .names
            .iter()
            .map(|n| {
                n.as_deref()
                    .map_or("-".into(), crate::kernel_name::function)
            })
            .collect();
        let _ = writeln!(out, "Launch {}: {}", l.index, names.join(" | "));
        let unfinished: Vec<String> = (l.completed.iter().enumerate())
            .filter(|(_, done)| **done == Some(false))
            .map(|(i, _)| index(i))
            .collect();
        if !unfinished.is_empty() {
            let _ = writeln!(
                out,
                "  incomplete in {}: those figures stop where the run did, and their differences are no result",
                unfinished.join(" ")
            );
        }
        let hidden = l.hidden.map(|n| {
            let rows = crate::words::count(n as u64, "row", "rows");
            format!("  {rows} hidden: {}", c.filter.reason())
        });
        if l.metrics.is_empty() {
            let _ = writeln!(out, "{}", hidden.unwrap_or_default());
            continue;
        }
        let mut head = format!("  {:<hw$}", "metric", hw = label_w + 2);
        for i in 0..c.traces.len() {
            let _ = write!(head, " {:>w$}", format!("[{i}]"));
            if i >= c.baselines {
                let _ = write!(head, " {:>9}", "diff");
            }
        }
        if c.baselines >= 2 {
            let _ = write!(head, "  z-scores");
        }
        let _ = writeln!(out, "{head}");
        let mut section = "";
        for row in &l.metrics {
            if row.section != section {
                section = row.section;
                let _ = writeln!(out, "  {}", flat::section_title(section));
            }
            let mut line = format!("    {:<label_w$}", row.label);
            for (i, v) in row.values.iter().enumerate() {
                let _ = write!(line, " {:>w$}", cell(v));
                if i >= c.baselines {
                    let d = match (row.diff_pct[i], row.baseline_mean) {
                        (Some(d), _) => format!("{d:+.1}%"),
                        // No percentage of zero, but a change all the same.
                        (None, Some(m)) if m == 0.0 && number(v).is_some_and(|x| x != 0.0) => {
                            "from 0".to_string()
                        }
                        _ => "-".to_string(),
                    };
                    let _ = write!(line, " {d:>9}");
                }
            }
            if c.baselines >= 2 {
                let z: Vec<String> = row.z_score[c.baselines..]
                    .iter()
                    .map(|z| z.map_or("-".into(), |z| format!("{z:+.2}")))
                    .collect();
                let _ = write!(line, "  {}", z.join(" "));
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
        if let Some(hidden) = hidden {
            let _ = writeln!(out, "{hidden}");
        }
    }
    out
}

/// The comparison as CSV: one row per launch, metric and trace.
pub fn to_csv(c: &Comparison) -> String {
    let mut out = String::from(
        "launch,kernel,section,metric,unit,trace,baseline,value,diff_pct,z_score,completed\n",
    );
    for l in &c.launches {
        for row in &l.metrics {
            for (i, v) in row.values.iter().enumerate() {
                let opt = |x: Option<f64>| x.map_or(String::new(), |x| format!("{x:.4}"));
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{},{},{},{},{},{}",
                    l.index,
                    csv_field(l.names[i].as_deref().unwrap_or("")),
                    row.section,
                    csv_field(&row.metric),
                    row.unit,
                    csv_field(&c.traces[i]),
                    i < c.baselines,
                    csv_field(&match v {
                        None => String::new(),
                        Some(_) => cell(v),
                    }),
                    opt(row.diff_pct[i]),
                    opt(row.z_score[i]),
                    l.completed[i].map_or(String::new(), |done| done.to_string()),
                );
            }
        }
    }
    out
}
