//! The operators' documents and shipped monitoring files, checked against the
//! server itself so that they cannot drift from it:
//!
//! - the settings table of `docs/operations.md` and `.env.example` against
//!   what `chess-server --help` lists ([`Settings`]): every flag with its
//!   environment variable and default, and nothing more;
//! - every `chess_*` metric (and label value) that the Prometheus rules
//!   (`deploy/prometheus/alerts.yml`), their unit tests and the Grafana
//!   dashboard (`deploy/grafana/chess-server.json`) name, against the
//!   `/metrics` of a running node.
//!
//! - `docker-compose.yml` against the nginx configuration it mounts
//!   (`deploy/nginx/chess.conf`): every upstream is a node of the file, and
//!   the nodes trust exactly the proxy's address.
//!
//! (`scripts/check-alerts.sh` runs promtool on the rules;
//! `scripts/check-operations.sh` runs the documented backups and restores.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use chess_server::{Application, Settings};
use clap::CommandFactory;

/// A file of the repository, as text.
fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|error| panic!("{}: {error}", full.display()))
}

/// Fails listing every problem at once, so one run shows all the drift.
fn assert_none(problems: &[String], what: &str) {
    assert!(
        problems.is_empty(),
        "{what}:\n  - {}",
        problems.join("\n  - ")
    );
}

/// One setting as `chess-server --help` lists it.
#[derive(Debug)]
struct HelpSetting {
    flag: String,
    env: String,
    /// The default `--help` shows, several values joined by commas.
    default: Option<String>,
}

/// Every setting of `--help`: its flag, environment variable and default.
fn help_settings() -> Vec<HelpSetting> {
    let command = Settings::command();
    command
        .get_arguments()
        .filter(|arg| !matches!(arg.get_id().as_str(), "help" | "version"))
        // Hidden settings (tests' knobs, such as the reward retry schedule in
        // milliseconds) are not in `--help`, nor for operators.
        .filter(|arg| !arg.is_hide_set())
        .map(|arg| {
            let id = arg.get_id().as_str();
            let long = arg
                .get_long()
                .unwrap_or_else(|| panic!("the setting {id} has no --flag"));
            let env = arg
                .get_env()
                .and_then(|env| env.to_str())
                .unwrap_or_else(|| panic!("the setting --{long} has no environment variable"));
            let defaults: Vec<String> = arg
                .get_default_values()
                .iter()
                .map(|value| value.to_string_lossy().into_owned())
                .collect();
            HelpSetting {
                flag: format!("--{long}"),
                env: env.to_owned(),
                default: (!defaults.is_empty()).then(|| defaults.join(",")),
            }
        })
        .collect()
}

/// The text of the first code span (`` `...` ``) of `cell`.
fn code_span(cell: &str) -> Option<&str> {
    let (_, rest) = cell.split_once('`')?;
    rest.split_once('`').map(|(code, _)| code)
}

/// The cells of a Markdown table row, split at the pipes that are not escaped.
fn cells(row: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut escaped = false;
    for c in row
        .trim()
        .trim_start_matches('|')
        .trim_end_matches('|')
        .chars()
    {
        match c {
            '|' if !escaped => cells.push(String::new()),
            _ => {
                escaped = c == '\\';
                cells.last_mut().expect("one cell at least").push(c);
            }
        }
    }
    cells
        .into_iter()
        .map(|cell| cell.trim().to_owned())
        .collect()
}

/// The body rows of the first table under the heading `heading`.
fn table_under(doc: &str, heading: &str) -> Vec<Vec<String>> {
    let mut lines = doc
        .lines()
        .skip_while(|line| line.trim() != heading)
        .skip(1);
    let rows: Vec<&str> = lines
        .by_ref()
        .take_while(|line| !line.starts_with("## "))
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .collect();
    // The header row and the |---| row are not settings.
    rows.iter().skip(2).map(|row| cells(row)).collect()
}

#[test]
fn the_settings_table_of_the_operations_guide_is_what_help_lists() {
    let doc = read("docs/operations.md");
    let rows = table_under(&doc, "## Settings");
    assert!(
        rows.len() > 10,
        "no settings table under `## Settings` in docs/operations.md ({} rows)",
        rows.len()
    );
    let settings = help_settings();
    let mut problems = Vec::new();
    let mut listed = BTreeSet::new();
    for row in &rows {
        let [flag, env, default, ..] = row.as_slice() else {
            problems.push(format!("a row of fewer than four cells: {row:?}"));
            continue;
        };
        let flag = code_span(flag).unwrap_or_default();
        if !listed.insert(flag.to_owned()) {
            problems.push(format!("{flag} is listed twice"));
        }
        let Some(setting) = settings.iter().find(|setting| setting.flag == flag) else {
            problems.push(format!("`{flag}` is in the table but not in --help"));
            continue;
        };
        if code_span(env) != Some(setting.env.as_str()) {
            problems.push(format!(
                "{flag}: the table says `{env}`, --help says {}",
                setting.env
            ));
        }
        match &setting.default {
            Some(value) if code_span(default) != Some(value.as_str()) => problems.push(format!(
                "{flag}: the default column should start with `{value}`, it reads: {default}"
            )),
            None if !default.starts_with("unset") => problems.push(format!(
                "{flag} has no default in --help: the default column should say `unset: ...`, it reads: {default}"
            )),
            _ => {}
        }
    }
    for setting in &settings {
        if !listed.contains(&setting.flag) {
            problems.push(format!(
                "{} ({}) is in --help but not in the table",
                setting.flag, setting.env
            ));
        }
    }
    assert_none(
        &problems,
        "docs/operations.md's settings table differs from `chess-server --help`",
    );
}

/// Variables `.env.example` may set that are not settings of `--help`.
const READ_BY_LIBRARIES: [&str; 2] = ["RUST_LOG", "NO_COLOR"];

#[test]
fn the_env_example_sets_what_help_lists() {
    let example = read(".env.example");
    let settings = help_settings();
    let mut problems = Vec::new();
    let mut named = BTreeSet::new();
    for line in example.lines() {
        // `NAME=value`, or commented out: `# NAME=value`.
        let commented = line.starts_with('#');
        let text = line.trim_start_matches('#').trim_start();
        let Some((name, value)) = text.split_once('=') else {
            continue;
        };
        let is_name = name.starts_with(|c: char| c.is_ascii_uppercase())
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if !is_name {
            continue;
        }
        named.insert(name.to_owned());
        match settings.iter().find(|setting| setting.env == name) {
            Some(setting) => {
                if let Some(default) = setting.default.as_deref()
                    && !commented
                    && value != default
                {
                    problems.push(format!("{name}={value}, but --help's default is {default}"));
                }
            }
            None if READ_BY_LIBRARIES.contains(&name) => {}
            None => problems.push(format!("{name} is not a setting of --help")),
        }
    }
    for setting in &settings {
        if !named.contains(&setting.env) {
            problems.push(format!("{} ({}) is missing", setting.env, setting.flag));
        }
    }
    assert_none(&problems, ".env.example differs from `chess-server --help`");
}

/// One scrape of `/metrics`: every sample's name with the label sets it
/// has, and the family names of the `# TYPE` lines.
#[derive(Debug, Default)]
struct Exposition {
    samples: BTreeMap<String, Vec<BTreeMap<String, String>>>,
    families: BTreeSet<String>,
}

impl Exposition {
    fn parse(text: &str) -> Exposition {
        let mut exposition = Exposition::default();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                if let Some(name) = rest.split_whitespace().next() {
                    exposition.families.insert(name.to_owned());
                }
                continue;
            }
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            let end = line.find(['{', ' ']).unwrap_or(line.len());
            let labels = match line[end..].strip_prefix('{') {
                Some(rest) => matchers(&rest[..rest.find('}').unwrap_or(rest.len())])
                    .into_iter()
                    .map(|(label, _, value)| (label, value))
                    .collect(),
                None => BTreeMap::new(),
            };
            exposition
                .samples
                .entry(line[..end].to_owned())
                .or_default()
                .push(labels);
        }
        exposition
    }

    /// Whether some sample `name` has `label` = `value`.
    fn has_label(&self, name: &str, label: &str, value: &str) -> bool {
        self.samples.get(name).is_some_and(|sets| {
            sets.iter()
                .any(|labels| labels.get(label).map(String::as_str) == Some(value))
        })
    }
}

/// The `label op "value"` matchers of a selector's braces (without them).
fn matchers(text: &str) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(quote) = rest.find('"') {
        let head = rest[..quote].trim().trim_start_matches(',').trim();
        let op_start = head.find(['=', '!']).unwrap_or(head.len());
        let (label, op) = head.split_at(op_start);
        let after = &rest[quote + 1..];
        let close = after.find('"').unwrap_or(after.len());
        found.push((
            label.trim().to_owned(),
            op.trim().to_owned(),
            after[..close].to_owned(),
        ));
        rest = after.get(close + 1..).unwrap_or("");
    }
    found
}

/// Every `chess_*` name in `text`, with the text of its braces when a
/// selector follows it.
fn references(text: &str) -> Vec<(String, Option<String>)> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("chess_") {
        let preceded = rest[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        let tail = &rest[start..];
        let end = tail
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(tail.len());
        // `chess_*` in prose names no metric.
        if !preceded && end > "chess_".len() {
            let braces = tail[end..]
                .strip_prefix('{')
                .map(|inner| inner[..inner.find('}').unwrap_or(inner.len())].to_owned());
            found.push((tail[..end].to_owned(), braces));
        }
        rest = &tail[end..];
    }
    found
}

/// The values of `key` in a YAML file: `key: value`, `- key: value` or a
/// block scalar (`key: |` or `key: >-` and the lines indented under it).
fn yaml_values(text: &str, key: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut values = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let indent = line.len() - line.trim_start().len();
        let item = line.trim_start().trim_start_matches("- ");
        let Some(value) = item
            .strip_prefix(key)
            .and_then(|rest| rest.strip_prefix(':'))
        else {
            continue;
        };
        let value = value.trim();
        if value.starts_with('|') || value.starts_with('>') {
            let block: Vec<&str> = lines[index + 1..]
                .iter()
                .take_while(|next| {
                    next.trim().is_empty() || next.len() - next.trim_start().len() > indent
                })
                .map(|next| next.trim())
                .collect();
            values.push(block.join("\n"));
        } else {
            values.push(value.trim_matches(['\'', '"']).to_owned());
        }
    }
    values
}

/// The deployment `docker compose up` makes is the one the operations guide
/// describes and the rolling-restart test runs (tests/rolling_restart.rs):
/// the shipped nginx file in front of the nodes on one public port, each
/// upstream a node of the file that listens where nginx sends, and the nodes
/// trusting the proxy's forwarded addresses, and no one else's.
#[test]
fn docker_compose_runs_the_shipped_proxy_in_front_of_its_nodes() {
    let compose = read("docker-compose.yml");
    let nginx = read("deploy/nginx/chess.conf");
    let mut problems = Vec::new();
    if !compose.contains("./deploy/nginx/chess.conf:/etc/nginx/conf.d/default.conf:ro") {
        problems.push("the proxy does not mount deploy/nginx/chess.conf".to_owned());
    }
    let upstreams: Vec<&str> = nginx
        .lines()
        .filter_map(|line| line.trim().strip_prefix("server "))
        .filter_map(|rest| rest.split_whitespace().next())
        // `server {` opens the server block; an upstream is `host:port`.
        .filter(|address| address.contains(':'))
        .collect();
    if upstreams.len() < 2 {
        problems.push(format!("nginx has {} upstream nodes", upstreams.len()));
    }
    for upstream in &upstreams {
        let (host, port) = upstream
            .trim_end_matches(';')
            .split_once(':')
            .unwrap_or((upstream, ""));
        if !compose.contains(&format!("\n  {host}:\n")) {
            problems.push(format!(
                "nginx sends to {host}, which is not a service of the file"
            ));
        }
        if !yaml_values(&compose, "NODE_NAME")
            .iter()
            .any(|name| name == host)
        {
            problems.push(format!("no node of the file is named {host}"));
        }
        if port != "8080" || !compose.contains("expose:\n    - \"8080\"") {
            problems.push(format!(
                "nginx sends to port {port:?}, the nodes listen on 8080"
            ));
        }
    }
    let proxy_addresses = yaml_values(&compose, "ipv4_address");
    let trusted = yaml_values(&compose, "TRUSTED_PROXIES");
    if proxy_addresses.len() != 1 || trusted != proxy_addresses {
        problems.push(format!(
            "the nodes trust {trusted:?}, the proxy's address is {proxy_addresses:?}"
        ));
    }
    let published: Vec<&str> = compose
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("- \"") && line.contains(":80"))
        .collect();
    if published.len() != 1 {
        problems.push(format!(
            "expected one public port, the proxy's: {published:?}"
        ));
    }
    assert_none(&problems, "docker-compose.yml and deploy/nginx/chess.conf");
}

/// Every string under an `expr` key of the dashboard's JSON.
fn dashboard_exprs(value: &serde_json::Value, found: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(fields) => {
            for (key, field) in fields {
                match (key.as_str(), field) {
                    ("expr", serde_json::Value::String(expr)) => found.push(expr.clone()),
                    _ => dashboard_exprs(field, found),
                }
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                dashboard_exprs(item, found);
            }
        }
        _ => {}
    }
}

/// Labels Prometheus adds at scrape time, which `/metrics` does not carry.
const TARGET_LABELS: [&str; 2] = ["job", "instance"];

/// The problems of the PromQL (or test series) `query` from `source`: a
/// name that is not a sample of the scrape (a counter needs `_total`, a
/// histogram `_bucket`, `_sum` or `_count`), a label value no sample has.
fn check_query(exposition: &Exposition, source: &str, query: &str, problems: &mut Vec<String>) {
    for (name, braces) in references(query) {
        if !exposition.samples.contains_key(&name) {
            problems.push(format!(
                "{source}: `{name}` is not a sample the server exports"
            ));
            continue;
        }
        for (label, op, value) in matchers(braces.as_deref().unwrap_or("")) {
            if TARGET_LABELS.contains(&label.as_str()) {
                continue;
            }
            // `=~"a|b"` names the values a and b.
            let values: Vec<&str> = if op.ends_with('~') {
                value.split('|').collect()
            } else {
                vec![value.as_str()]
            };
            for value in values {
                if !exposition.has_label(&name, &label, value) {
                    problems.push(format!(
                        "{source}: no sample `{name}` has {label}=\"{value}\""
                    ));
                }
            }
        }
    }
}

/// Scrapes the `/metrics` of a node started with the default settings (on a
/// fresh SQLite file under the cargo target folder).
async fn scrape_a_running_node() -> String {
    let folder = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("operations-{}", uuid::Uuid::new_v4()));
    let mut settings = Settings::defaults();
    settings.host = "127.0.0.1".parse().expect("an address");
    settings.port = 0;
    settings.database_url = format!("sqlite://{}", folder.join("chess.db").display());
    settings.data_dir = folder.clone();
    settings.metrics_listen = Some("127.0.0.1:0".parse().expect("an address"));
    let app = Application::build(settings)
        .await
        .expect("the server starts");
    let address = app.metrics_address().expect("a metrics listener");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(app.run_until_stopped(async {
        let _ = stopped.await;
    }));
    let response = reqwest::get(format!("http://{address}/metrics"))
        .await
        .expect("GET /metrics");
    assert_eq!(response.status(), 200);
    let text = response.text().await.expect("a text body");
    let _ = stop.send(());
    server
        .await
        .expect("the server task ends")
        .expect("the server stops cleanly");
    let _ = std::fs::remove_dir_all(&folder);
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_metric_the_alerts_and_the_dashboard_name_is_exported() {
    let exposition = Exposition::parse(&scrape_a_running_node().await);
    assert!(
        exposition
            .samples
            .contains_key("chess_moves_committed_total"),
        "an unexpected scrape: {exposition:?}"
    );
    let rules = read("deploy/prometheus/alerts.yml");
    let tests = read("deploy/prometheus/alerts.test.yml");
    let dashboard = read("deploy/grafana/chess-server.json");
    let mut problems = Vec::new();

    // Queries must name samples exactly as Prometheus stores them.
    let mut queries: Vec<(String, String)> = Vec::new();
    for expr in yaml_values(&rules, "expr") {
        queries.push(("deploy/prometheus/alerts.yml".to_owned(), expr));
    }
    for series in yaml_values(&tests, "series") {
        queries.push(("deploy/prometheus/alerts.test.yml".to_owned(), series));
    }
    let json: serde_json::Value = serde_json::from_str(&dashboard).expect("the dashboard is JSON");
    let mut exprs = Vec::new();
    dashboard_exprs(&json, &mut exprs);
    for expr in exprs {
        queries.push(("deploy/grafana/chess-server.json".to_owned(), expr));
    }
    assert!(queries.len() > 20, "too few queries found: {queries:?}");
    for (source, query) in &queries {
        check_query(&exposition, source, query, &mut problems);
    }

    // Prose (summaries, descriptions, panel titles) may name a family too.
    for (source, text) in [
        ("deploy/prometheus/alerts.yml", &rules),
        ("deploy/prometheus/alerts.test.yml", &tests),
        ("deploy/grafana/chess-server.json", &dashboard),
    ] {
        for (name, _) in references(text) {
            if !exposition.samples.contains_key(&name) && !exposition.families.contains(&name) {
                problems.push(format!("{source}: `{name}` is no metric of the server"));
            }
        }
    }
    assert_none(
        &problems,
        "the monitoring files name metrics the server does not export",
    );
}
