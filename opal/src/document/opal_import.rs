//! Import of an original Opal config file (its `configs/defaults.json` shape).
//!
//! Every key of the Opal file ends up in the [`ImportReport`]: either mapped (Opal path →
//! our path, with a note when the meaning shifts) or ignored (with the reason). Values may be
//! numbers or numeric strings, as Opal's Python loader accepts both (`"a": "4"`).

use engine::hardware::{self, GpuSpec};
use engine::model::catalogue;
use engine::offload::{TierConfig, BYTES_PER_GB};
use engine::router::policy::{NoParams, PolicyConfig};
use engine::scenario::{OpalCompatConfig, Scenario};
use engine::timing::TimingKind;
use engine::validate::{index, join, Problem, Problems};
use engine::workload::config::{SyntheticConfig, TraceConfig};
use engine::workload::{GeneratorConfig, LengthDist, StageConfig};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// Which format a scenario file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Format {
    /// Our scenario document.
    Ours,
    /// An original Opal config file.
    Opal,
    /// Neither (not JSON, not an object, or keys of neither format).
    Unknown,
}

/// Our top-level sections.
const OUR_SECTIONS: [&str; 14] = [
    "version",
    "simulation",
    "model",
    "hardware",
    "worker",
    "kv_cache",
    "router",
    "workload",
    "slo",
    "sweep",
    "race",
    "deployment",
    "measurement",
    "opal_compat",
];

/// Tells our documents from Opal's by their keys, so one "Import" button can take either.
pub fn detect_format(text: &str) -> Format {
    let Ok(Value::Object(top)) = serde_json::from_str::<Value>(text) else {
        return Format::Unknown;
    };
    let has = |section: &str, key: &str| {
        top.get(section)
            .and_then(Value::as_object)
            .is_some_and(|o| o.contains_key(key))
    };
    let opal_stage = top
        .get("workload")
        .and_then(|w| w.get("stages"))
        .and_then(Value::as_array)
        .is_some_and(|s| s.iter().any(|st| st.get("workload_params").is_some()));
    if top.contains_key("kvc")
        || has("model", "model_params")
        || has("router", "router_params")
        || ["worker_params", "hw", "vllm_params", "inference_params"]
            .iter()
            .any(|k| has("worker", k))
        || opal_stage
    {
        Format::Opal
    } else if top.keys().all(|k| OUR_SECTIONS.contains(&k.as_str())) {
        Format::Ours
    } else {
        Format::Unknown
    }
}

/// One Opal key carried over.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MappedKey {
    /// Path in the Opal file, e.g. `router.router_params.policy`.
    pub from: String,
    /// Path in our scenario, e.g. `router.policy`.
    pub to: String,
    /// How the meaning or the value changed on the way, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One Opal key left out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IgnoredKey {
    /// Path in the Opal file.
    pub from: String,
    /// Why it has no counterpart here.
    pub reason: String,
}

/// What an import did with every key of the Opal file.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ImportReport {
    /// Keys carried over, in file order.
    pub mapped: Vec<MappedKey>,
    /// Keys left out, with reasons.
    pub ignored: Vec<IgnoredKey>,
    /// Where the original Opal behaves unlike vLLM, so that the same config gives other
    /// figures here whatever `opal_compat` says: what it does and what that changes, one
    /// sentence each.
    pub differs: Vec<String>,
    /// The original's behaviours that `opal_compat` reproduces (all off by default): the
    /// switch, what the original does and what that changes, one sentence each.
    pub behaviours: Vec<String>,
    /// The scenario's `opal_compat` switches are all on ([`reproduce_original`]).
    pub compat: bool,
}

/// Turns on every `opal_compat` switch of an imported scenario, so that it runs as the
/// original Opal does and gives its figures (the report then says so).
pub fn reproduce_original(scenario: &mut Scenario, report: &mut ImportReport) {
    scenario.opal_compat = OpalCompatConfig::all();
    report.compat = true;
}

impl ImportReport {
    /// The mapping of the Opal key `from`, if it was mapped.
    pub fn mapping(&self, from: &str) -> Option<&MappedKey> {
        self.mapped.iter().find(|m| m.from == from)
    }

    /// The reason the Opal key `from` was ignored, if it was.
    pub fn ignored_reason(&self, from: &str) -> Option<&str> {
        self.ignored
            .iter()
            .find(|i| i.from == from)
            .map(|i| i.reason.as_str())
    }
}

impl std::fmt::Display for ImportReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "mapped:")?;
        for m in &self.mapped {
            write!(f, "  {} -> {}", m.from, m.to)?;
            if let Some(n) = &m.note {
                write!(f, " ({n})")?;
            }
            writeln!(f)?;
        }
        writeln!(f, "ignored:")?;
        for i in &self.ignored {
            writeln!(f, "  {}: {}", i.from, i.reason)?;
        }
        if self.compat {
            writeln!(
                f,
                "opal_compat is on: the run follows the original's prompts, batching and \
                 delays where they depart from vLLM"
            )?;
        } else if !self.behaviours.is_empty() {
            writeln!(
                f,
                "the figures will differ from the original's unless opal_compat is on \
                 (import-opal --compat sets every switch):"
            )?;
            for d in &self.behaviours {
                writeln!(f, "  - {d}")?;
            }
        }
        if !self.differs.is_empty() {
            writeln!(f, "unlike the original, whatever opal_compat says:")?;
            for d in &self.differs {
                writeln!(f, "  - {d}")?;
            }
        }
        Ok(())
    }
}

/// Imports an Opal config: the equivalent scenario and what happened to every key, or every
/// problem (Opal paths for what could not be read, our paths for what does not validate).
pub fn import_opal(text: &str) -> Result<(Scenario, ImportReport), Vec<Problem>> {
    let whole = |message: String| {
        vec![Problem {
            path: String::new(),
            message,
        }]
    };
    let value: Value =
        serde_json::from_str(text).map_err(|e| whole(format!("not valid JSON: {e}")))?;
    let Value::Object(top) = value else {
        return Err(whole("an Opal config must be a JSON object".into()));
    };
    let mut im = Importer::default();
    im.opal_defaults();
    let mut top = Obj::new("", &top);
    im.simulation(&mut top);
    im.model(&mut top);
    im.router(&mut top);
    im.worker(&mut top);
    im.kvc(&mut top);
    im.workload(&mut top);
    im.finish(top);
    im.settle();
    im.differences();
    if !im.problems.is_empty() {
        return Err(im.problems.into_vec());
    }
    let problems = im.scenario.validate();
    if !problems.is_empty() {
        return Err(problems
            .into_iter()
            .map(|p| Problem {
                message: format!("{} (after import from Opal)", p.message),
                path: p.path,
            })
            .collect());
    }
    Ok((im.scenario, im.report))
}

/// An Opal JSON object being read: remembers which keys were looked at.
struct Obj<'a> {
    path: String,
    map: &'a Map<String, Value>,
    used: BTreeSet<&'a str>,
}

impl<'a> Obj<'a> {
    fn new(path: &str, map: &'a Map<String, Value>) -> Self {
        Self {
            path: path.to_string(),
            map,
            used: BTreeSet::new(),
        }
    }

    fn path(&self, key: &str) -> String {
        join(&self.path, key)
    }

    /// The value at `key` (null counts as absent), marking it read.
    fn get(&mut self, key: &str) -> Option<&'a Value> {
        let (k, v) = self.map.get_key_value(key)?;
        self.used.insert(k.as_str());
        (!v.is_null()).then_some(v)
    }
}

/// Reads Opal objects into a scenario, collecting the report and the problems.
#[derive(Default)]
struct Importer {
    scenario: Scenario,
    report: ImportReport,
    problems: Problems,
    /// Staleness sources for `router.kv_event_interval` (Opal path, seconds).
    event_intervals: Vec<(String, f64)>,
    /// Whether `enable_scaling` was true.
    scaling: bool,
    /// Whether a synthetic stage was imported (Opal's prompts nest; ours do not).
    nested_prompts: bool,
}

impl Importer {
    fn mapped(&mut self, from: String, to: &str, note: Option<String>) {
        self.report.mapped.push(MappedKey {
            from,
            to: to.to_string(),
            note,
        });
    }

    fn ignored(&mut self, from: String, reason: &str) {
        self.report.ignored.push(IgnoredKey {
            from,
            reason: reason.to_string(),
        });
    }

    /// Marks `key` as known-but-unused, reporting it with `reason` if present.
    fn ignore(&mut self, o: &mut Obj, key: &str, reason: &str) {
        if o.map.contains_key(key) {
            o.get(key);
            self.ignored(o.path(key), reason);
        }
    }

    /// Reports every key of `o` nobody read.
    fn finish(&mut self, o: Obj) {
        for k in o.map.keys() {
            if !o.used.contains(k.as_str()) {
                self.ignored(o.path(k), "not an Opal setting this importer knows");
            }
        }
    }

    fn number(&mut self, o: &mut Obj, key: &str) -> Option<f64> {
        let v = o.get(key)?;
        let n = match v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        match n.filter(|x| x.is_finite()) {
            Some(x) => Some(x),
            None => {
                self.problems
                    .push(o.path(key), format!("expected a number, got {v}"));
                None
            }
        }
    }

    fn whole<T: TryFrom<u64>>(&mut self, o: &mut Obj, key: &str) -> Option<T> {
        let x = self.number(o, key)?;
        let n = (x >= 0.0 && x.fract() == 0.0 && x <= u64::MAX as f64)
            .then(|| T::try_from(x as u64).ok())
            .flatten();
        if n.is_none() {
            self.problems.push(
                o.path(key),
                format!("expected a whole number >= 0, got {x}"),
            );
        }
        n
    }

    fn boolean(&mut self, o: &mut Obj, key: &str) -> Option<bool> {
        let v = o.get(key)?;
        let b = match v {
            Value::Bool(b) => Some(*b),
            Value::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
            Value::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
            _ => None,
        };
        if b.is_none() {
            self.problems
                .push(o.path(key), format!("expected true or false, got {v}"));
        }
        b
    }

    fn string(&mut self, o: &mut Obj, key: &str) -> Option<String> {
        let v = o.get(key)?;
        match v.as_str() {
            Some(s) => Some(s.to_string()),
            None => {
                self.problems
                    .push(o.path(key), format!("expected a string, got {v}"));
                None
            }
        }
    }

    fn object<'a>(&mut self, o: &mut Obj<'a>, key: &str) -> Option<Obj<'a>> {
        let v = o.get(key)?;
        match v.as_object() {
            Some(map) => Some(Obj::new(&o.path(key), map)),
            None => {
                self.problems
                    .push(o.path(key), format!("expected an object, got {v}"));
                None
            }
        }
    }

    /// Reads `key` with `read` and, if present, stores it with `set` and reports the mapping.
    fn map<T>(
        &mut self,
        o: &mut Obj,
        key: &str,
        to: &str,
        read: impl FnOnce(&mut Self, &mut Obj) -> Option<T>,
        set: impl FnOnce(&mut Scenario, T),
    ) {
        if let Some(v) = read(self, o) {
            set(&mut self.scenario, v);
            self.mapped(o.path(key), to, None);
        }
    }

    /// Sets Opal's behaviour where our defaults differ, before the file is read, so that a
    /// file without the key (or its whole section) still gets it; [`Importer::settle`]
    /// reports the keys the file left out ([`OPAL_DEFAULTS`]).
    fn opal_defaults(&mut self) {
        let w = &mut self.scenario.worker;
        // Set even though it is our default today: an import must price steps with Opal's
        // formula whatever our default timing model becomes.
        w.timing.model = TimingKind::OpalAnalytical;
        w.gpu_memory_utilization = 1.0;
        w.enable_prefix_caching = false;
        // Opal's step time is its formula alone.
        w.step_overhead = 0.0;
        // Opal decides each batch when the previous step ends (no async scheduling).
        w.async_scheduling = false;
        // Opal writes a request's prompt to the tiers once the request completes.
        self.scenario.kv_cache.store = engine::offload::StoreWhen::OnCompletion;
    }

    fn simulation(&mut self, top: &mut Obj) {
        let Some(mut o) = self.object(top, "simulation") else {
            return;
        };
        self.map(
            &mut o,
            "seed",
            "simulation.seed",
            |s, o| s.whole(o, "seed"),
            |sc, v| sc.simulation.seed = v,
        );
        if let Some(t) = self.number(&mut o, "simulation_time") {
            let (value, note) = if t <= 0.0 {
                (None, format!("{t} means unbounded: null"))
            } else {
                (Some(t), "seconds".to_string())
            };
            self.scenario.simulation.simulation_time = value;
            self.mapped(
                o.path("simulation_time"),
                "simulation.simulation_time",
                Some(note),
            );
        }
        self.map(
            &mut o,
            "num_workers",
            "simulation.num_workers",
            |s, o| s.whole(o, "num_workers"),
            |sc, v| sc.simulation.num_workers = v,
        );
        for key in ["save_simulation_data", "show_progress"] {
            self.ignore(
                &mut o,
                key,
                "an output option of the Python tool; the app keeps every run's results",
            );
        }
        self.finish(o);
    }

    fn model(&mut self, top: &mut Obj) {
        let Some(mut model) = self.object(top, "model") else {
            return;
        };
        if let Some(mut o) = self.object(&mut model, "model_params") {
            if let Some(name) = self.string(&mut o, "name") {
                match catalogue_name(&name) {
                    Some(ours) => {
                        let note = (ours != name).then(|| format!("catalogue model {ours}"));
                        self.scenario.model.name = ours.to_string();
                        self.mapped(o.path("name"), "model.name", note);
                    }
                    None => {
                        let names: Vec<&str> =
                            catalogue::catalogue().into_iter().map(|(n, _)| n).collect();
                        self.problems.push(
                            o.path("name"),
                            format!(
                                "unknown model \"{name}\"; this simulator knows {} (or define \
                                 a custom model after importing)",
                                names.join(", ")
                            ),
                        );
                    }
                }
            }
            self.ignore(
                &mut o,
                "config_dir",
                "Opal reads model shapes from config files; ours come from the catalogue",
            );
            self.finish(o);
        }
        self.finish(model);
    }

    fn router(&mut self, top: &mut Obj) {
        let Some(mut router) = self.object(top, "router") else {
            return;
        };
        if let Some(mut o) = self.object(&mut router, "router_params") {
            if let Some(name) = self.string(&mut o, "policy") {
                let squashed: String = name
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric())
                    .map(|c| c.to_ascii_lowercase())
                    .collect();
                let (policy, note) = match squashed.as_str() {
                    "roundrobin" => (Some(PolicyConfig::RoundRobin(NoParams {})), None),
                    "leastloaded" => {
                        self.report.differs.push(
                            "Opal's LeastLoaded router fails at its first decision in the \
                             original (an AttributeError in its code); here least_loaded sends \
                             each request to the worker with the fewest outstanding requests."
                                .into(),
                        );
                        (Some(PolicyConfig::LeastLoaded(NoParams {})), None)
                    }
                    "random" => (Some(PolicyConfig::Random(NoParams {})), None),
                    "maxprefix" => (Some(PolicyConfig::MaxPrefix(NoParams {})), None),
                    "balanced" => (
                        Some(PolicyConfig::LeastLoaded(NoParams {})),
                        Some(
                            "Balanced becomes least_loaded (fewest outstanding requests); \
                             prefix_load weighs prefix matches against load if that was the aim"
                                .to_string(),
                        ),
                    ),
                    _ => (None, None),
                };
                match policy {
                    Some(p) => {
                        let note = note.or_else(|| Some(p.name().to_string()));
                        self.scenario.router.policy = p;
                        self.mapped(o.path("policy"), "router.policy", note);
                    }
                    None => self.problems.push(
                        o.path("policy"),
                        format!(
                            "unknown policy \"{name}\"; Opal's policies are RoundRobin, \
                             LeastLoaded, Random, MaxPrefix and Balanced"
                        ),
                    ),
                }
            }
            if let Some(on) = self.boolean(&mut o, "enable_scaling") {
                self.scaling = on;
                self.scenario.router.autoscaler.enabled = on;
                self.mapped(o.path("enable_scaling"), "router.autoscaler.enabled", None);
            }
            if let Some(t) = self.whole::<u32>(&mut o, "max_queue_threshold") {
                let a = &mut self.scenario.router.autoscaler;
                a.max_queue_threshold = t;
                let note = if a.scale_down_threshold >= t {
                    a.scale_down_threshold = t.saturating_sub(1);
                    Some(format!(
                        "scale_down_threshold lowered to {} to stay below it",
                        a.scale_down_threshold
                    ))
                } else {
                    None
                };
                self.mapped(
                    o.path("max_queue_threshold"),
                    "router.autoscaler.max_queue_threshold",
                    note,
                );
            }
            self.map(
                &mut o,
                "scale_latency",
                "router.autoscaler.scale_latency",
                |s, o| s.number(o, "scale_latency"),
                |sc, v| sc.router.autoscaler.scale_latency = v,
            );
            self.map(
                &mut o,
                "max_workers",
                "router.autoscaler.max_workers",
                |s, o| s.whole(o, "max_workers"),
                |sc, v| sc.router.autoscaler.max_workers = v,
            );
            if let Some(t) = self.number(&mut o, "periodic_infra_update_collection_time") {
                self.event_intervals
                    .push((o.path("periodic_infra_update_collection_time"), t));
            }
            self.ignore(
                &mut o,
                "max_event_batch_size",
                "our workers send all KV events of an interval as one batch",
            );
            self.finish(o);
        }
        self.finish(router);
    }

    fn worker(&mut self, top: &mut Obj) {
        let Some(mut worker) = self.object(top, "worker") else {
            return;
        };
        if let Some(mut o) = self.object(&mut worker, "worker_params") {
            self.ignore(
                &mut o,
                "worker_local_queue_capacity",
                "our workers take routed requests straight into vLLM's waiting queue",
            );
            self.ignore(
                &mut o,
                "periodic_infra_update_time",
                "our router counts each worker's outstanding requests itself, with no delay",
            );
            if let Some(t) = self.number(&mut o, "kvcevent_coalesce_time") {
                self.event_intervals
                    .push((o.path("kvcevent_coalesce_time"), t));
            }
            self.finish(o);
        }
        if let Some(o) = self.object(&mut worker, "hw") {
            self.hardware(o);
        }
        if let Some(o) = self.object(&mut worker, "vllm_params") {
            self.vllm(o);
        }
        if let Some(o) = self.object(&mut worker, "inference_params") {
            self.inference(o);
        }
        self.finish(worker);
    }

    fn hardware(&mut self, mut o: Obj) {
        let gpu = self.string(&mut o, "gpu");
        let memory = self.number(&mut o, "memory_gb");
        let tflops = self.number(&mut o, "tflops");
        let bandwidth = self.number(&mut o, "mem_bw_TBps");
        self.map(
            &mut o,
            "tp",
            "hardware.tp",
            |s, o| s.whole(o, "tp"),
            |sc, v| sc.hardware.tp = v,
        );
        let known = gpu.as_deref().and_then(catalogue_gpu);
        let base = known.clone().or_else(|| hardware::lookup("H100-SXM"));
        let Some(base) = base else { return };
        let spec = GpuSpec {
            name: gpu.clone().unwrap_or_else(|| base.name.clone()),
            peak_tflops: tflops.unwrap_or(base.peak_tflops),
            hbm_tbps: bandwidth.unwrap_or(base.hbm_tbps),
            memory_gb: memory.unwrap_or(base.memory_gb),
            ..base.clone()
        };
        let figures = [
            ("memory_gb", memory, "hardware.custom.memory_gb"),
            ("tflops", tflops, "hardware.custom.peak_tflops"),
            ("mem_bw_TBps", bandwidth, "hardware.custom.hbm_tbps"),
        ];
        match known {
            Some(k)
                if k.peak_tflops == spec.peak_tflops
                    && k.hbm_tbps == spec.hbm_tbps
                    && k.memory_gb == spec.memory_gb =>
            {
                self.scenario.hardware.gpu = k.name.clone();
                if let Some(g) = &gpu {
                    let note = (*g != k.name).then(|| format!("catalogue GPU {}", k.name));
                    self.mapped(o.path("gpu"), "hardware.gpu", note);
                }
                for (key, v, _) in figures {
                    if v.is_some() {
                        self.mapped(
                            o.path(key),
                            "hardware.gpu",
                            Some(format!("equal to the {} datasheet", k.name)),
                        );
                    }
                }
            }
            _ if gpu.is_none() && memory.is_none() && tflops.is_none() && bandwidth.is_none() => {}
            _ => {
                let why = match &known {
                    Some(k) => format!(
                        "differs from our {} ({} TFLOP/s, {} TB/s, {} GB), so Opal's figures \
                         become a custom GPU",
                        k.name, k.peak_tflops, k.hbm_tbps, k.memory_gb
                    ),
                    None => "not in our catalogue: a custom GPU with Opal's figures (missing \
                             ones from the H100-SXM)"
                        .to_string(),
                };
                self.scenario.hardware.gpu = "custom".into();
                self.scenario.hardware.custom = Some(spec);
                if gpu.is_some() {
                    self.mapped(o.path("gpu"), "hardware.custom.name", Some(why));
                }
                for (key, v, to) in figures {
                    if v.is_some() {
                        self.mapped(o.path(key), to, None);
                    }
                }
            }
        }
        self.finish(o);
    }

    fn vllm(&mut self, mut o: Obj) {
        macro_rules! whole_field {
            ($key:literal, $field:ident) => {
                self.map(
                    &mut o,
                    $key,
                    concat!("worker.", stringify!($field)),
                    |s, o| s.whole(o, $key),
                    |sc, v| sc.worker.$field = v,
                );
            };
        }
        whole_field!("max_num_seqs", max_num_seqs);
        whole_field!("max_num_batched_tokens", max_num_batched_tokens);
        whole_field!("max_kvc_ready_requests", max_kvc_ready_requests);
        whole_field!("block_size", block_size);
        self.map(
            &mut o,
            "chunked_prefill",
            "worker.chunked_prefill",
            |s, o| s.boolean(o, "chunked_prefill"),
            |sc, v| sc.worker.chunked_prefill = v,
        );
        self.map(
            &mut o,
            "gpu_memory_utilization",
            "worker.gpu_memory_utilization",
            |s, o| s.number(o, "gpu_memory_utilization"),
            |sc, v| sc.worker.gpu_memory_utilization = v,
        );
        self.map(
            &mut o,
            "enable_gpu_apc",
            "worker.enable_prefix_caching",
            |s, o| s.boolean(o, "enable_gpu_apc"),
            |sc, v| sc.worker.enable_prefix_caching = v,
        );
        self.finish(o);
    }

    fn inference(&mut self, mut o: Obj) {
        let model = self.string(&mut o, "model");
        let kind = match model.as_deref().map(str::to_ascii_lowercase).as_deref() {
            Some("roofline") => {
                self.mapped(
                    o.path("model"),
                    "worker.timing.model",
                    Some(
                        "Opal's roofline formula is our opal-analytical model (our roofline \
                         is a different, batch-wide model)"
                            .into(),
                    ),
                );
                TimingKind::OpalAnalytical
            }
            Some("synthetic") => {
                self.mapped(
                    o.path("model"),
                    "worker.timing.model",
                    Some("a fixed time per step: our constant model".into()),
                );
                TimingKind::Constant
            }
            Some(other) => {
                self.problems.push(
                    o.path("model"),
                    format!(
                        "unknown inference model \"{other}\"; Opal's are roofline and synthetic"
                    ),
                );
                return;
            }
            // Absent: Opal's default, its roofline formula (reported by settle).
            None => TimingKind::OpalAnalytical,
        };
        self.scenario.worker.timing.model = kind;
        if kind == TimingKind::Constant {
            self.map(
                &mut o,
                "mean_latency_secs",
                "worker.timing.constant_step_time",
                |s, o| s.number(o, "mean_latency_secs"),
                |sc, v| sc.worker.timing.constant_step_time = v,
            );
            for key in ["a", "b"] {
                self.ignore(&mut o, key, "used only by the roofline inference model");
            }
        } else {
            self.ignore(
                &mut o,
                "mean_latency_secs",
                "used only by the synthetic inference model",
            );
            self.map(
                &mut o,
                "a",
                "worker.timing.opal_a",
                |s, o| s.number(o, "a"),
                |sc, v| sc.worker.timing.opal_a = v,
            );
            self.map(
                &mut o,
                "b",
                "worker.timing.opal_b",
                |s, o| s.number(o, "b"),
                |sc, v| sc.worker.timing.opal_b = v,
            );
        }
        self.finish(o);
    }

    fn kvc(&mut self, top: &mut Obj) {
        let Some(mut o) = self.object(top, "kvc") else {
            return;
        };
        let mut listed: Vec<&'static str> = Vec::new();
        if let Some(v) = o.get("kvc_tiers") {
            match v.as_array() {
                Some(names) => {
                    for (i, n) in names.iter().enumerate() {
                        match n.as_str().and_then(opal_tier) {
                            Some(t) if !listed.contains(&t) => listed.push(t),
                            Some(t) => self.problems.push(
                                index(&o.path("kvc_tiers"), i),
                                format!("{t} is listed twice"),
                            ),
                            None => self.problems.push(
                                index(&o.path("kvc_tiers"), i),
                                format!(
                                    "unknown tier {n}; Opal's tiers are CPUMemory, LocalNVMe \
                                     and DistributedFS"
                                ),
                            ),
                        }
                    }
                    self.mapped(o.path("kvc_tiers"), "kv_cache.tiers", None);
                }
                None => self.problems.push(
                    o.path("kvc_tiers"),
                    format!("expected a list of tier names, got {v}"),
                ),
            }
        }
        self.map(
            &mut o,
            "chunk_size",
            "kv_cache.chunk_size",
            |s, o| s.whole(o, "chunk_size"),
            |sc, v| sc.kv_cache.chunk_size = v,
        );
        self.ignore(
            &mut o,
            "save_unfull_chunk",
            "not modelled: our tiers store whole chunks of chunk_size tokens",
        );
        // By position in `kvc_tiers` (distinct tiers, distinct positions): slots, not a sort,
        // which would compile one more sort into the wasm.
        let mut tiers: Vec<Option<TierConfig>> = listed.iter().map(|_| None).collect();
        for opal in OPAL_TIERS {
            let position = listed.iter().position(|t| *t == opal);
            let section = self.object(&mut o, opal);
            match (position, section) {
                (Some(i), section) => tiers[i] = Some(self.tier(opal, i, section)),
                (None, Some(s)) => {
                    self.ignored(s.path.clone(), "this tier is not listed in kvc_tiers");
                }
                (None, None) => {}
            }
        }
        self.scenario.kv_cache.tiers = tiers.into_iter().flatten().collect();
        self.finish(o);
    }

    /// The tier `opal` at position `i`, from its Opal section (or our preset when absent).
    fn tier(&mut self, opal: &str, i: usize, section: Option<Obj>) -> TierConfig {
        let ours = match opal {
            "CPUMemory" => TierConfig::cpu_dram(),
            "LocalNVMe" => TierConfig::local_nvme(),
            _ => TierConfig::distributed_fs(),
        };
        let mut tier = ours;
        let to = |field: &str| join(&index("kv_cache.tiers", i), field);
        let Some(mut o) = section else {
            self.mapped(
                format!("kvc.{opal}"),
                &index("kv_cache.tiers", i),
                Some(format!("no {opal} section: our {} preset", tier.name)),
            );
            return tier;
        };
        if let Some(v) = self.number(&mut o, "bandwidth_GBps") {
            tier.bandwidth_gbps = v;
            self.mapped(o.path("bandwidth_GBps"), &to("bandwidth_gbps"), None);
        }
        if let Some(v) = self.number(&mut o, "latency_nsec") {
            // Division keeps exact decimals exact: 200 / 1e9 is the double nearest 2e-7.
            tier.latency_s = v / 1e9;
            self.mapped(
                o.path("latency_nsec"),
                &to("latency_s"),
                Some("nanoseconds to seconds".into()),
            );
        }
        if let Some(v) = self.whole(&mut o, "concurrency") {
            tier.concurrency = v;
            self.mapped(o.path("concurrency"), &to("concurrency"), None);
        }
        if let Some(v) = self.number(&mut o, "capacity_GB") {
            tier.capacity_gb = gib_to_gb(v);
            self.mapped(
                o.path("capacity_GB"),
                &to("capacity_gb"),
                Some(format!(
                    "Opal's GB is 2³⁰ bytes, ours 10⁹: {v} × 1.073741824 = {}",
                    tier.capacity_gb
                )),
            );
        }
        self.finish(o);
        tier
    }

    fn workload(&mut self, top: &mut Obj) {
        let Some(mut w) = self.object(top, "workload") else {
            return;
        };
        if let Some(v) = w.get("stages") {
            let path = w.path("stages");
            match v.as_array() {
                Some(stages) => {
                    let mut out = Vec::new();
                    for (i, s) in stages.iter().enumerate() {
                        let p = index(&path, i);
                        match s.as_object() {
                            Some(map) => {
                                if let Some(stage) = self.stage(Obj::new(&p, map), out.len()) {
                                    out.push(stage);
                                }
                            }
                            None => self
                                .problems
                                .push(p, format!("expected a stage object, got {s}")),
                        }
                    }
                    self.scenario.workload.stages = out;
                }
                None => self
                    .problems
                    .push(path, format!("expected a list of stages, got {v}")),
            }
        }
        self.finish(w);
    }

    /// One stage; `at` is its index in our scenario.
    fn stage(&mut self, mut o: Obj, at: usize) -> Option<StageConfig> {
        let to = |field: &str| join(&index("workload.stages", at), field);
        let ty = self.string(&mut o, "type");
        let Some(ty) = ty else {
            if !self
                .problems
                .as_slice()
                .iter()
                .any(|p| p.path == o.path("type"))
            {
                self.problems.push(o.path("type"), "a stage needs a type");
            }
            return None;
        };
        let empty = Map::new();
        let mut params = self
            .object(&mut o, "workload_params")
            .unwrap_or_else(|| Obj::new(&o.path("workload_params"), &empty));
        let lower = ty.to_ascii_lowercase();
        let stage = match lower.as_str() {
            "uniformreqrate" | "exponentialreqrate" => {
                self.mapped(o.path("type"), &to("type"), None);
                self.synthetic(&mut params, lower == "uniformreqrate", &to)
            }
            "trace" => {
                self.mapped(
                    o.path("type"),
                    &to("type"),
                    (ty != "Trace").then(|| "Trace".to_string()),
                );
                self.trace(&mut params, &to)
            }
            _ => {
                self.problems.push(
                    o.path("type"),
                    format!(
                        "stage type \"{ty}\" has no counterpart here; importable types are \
                         UniformReqRate, ExponentialReqRate and Trace (after importing, \
                         RAGWorkload, Sessions and others can replace it)"
                    ),
                );
                params.used = params.map.keys().map(String::as_str).collect();
                None
            }
        };
        self.finish(params);
        self.finish(o);
        stage
    }

    fn stop_conditions(
        &mut self,
        params: &mut Obj,
        to: &impl Fn(&str) -> String,
    ) -> (Option<u64>, Option<f64>) {
        let total = self.whole::<u64>(params, "total_requests");
        if total.is_some() {
            self.mapped(params.path("total_requests"), &to("total_requests"), None);
        }
        let duration = self.number(params, "time_duration_sec");
        if duration.is_some() {
            self.mapped(
                params.path("time_duration_sec"),
                &to("time_duration_sec"),
                None,
            );
        }
        (total, duration)
    }

    fn synthetic(
        &mut self,
        p: &mut Obj,
        uniform: bool,
        to: &impl Fn(&str) -> String,
    ) -> Option<StageConfig> {
        let (total_requests, time_duration_sec) = self.stop_conditions(p, to);
        let mut c = SyntheticConfig::default();
        if let Some(r) = self.number(p, "request_rate") {
            c.request_rate = r;
            self.mapped(p.path("request_rate"), &to("request_rate"), None);
        }
        let mut exponential = !uniform;
        if let Some(j) = self.number(p, "jitter") {
            if !uniform {
                c.jitter = Some(j);
                self.mapped(p.path("jitter"), &to("jitter"), None);
            } else if j == 0.0 {
                self.ignored(
                    p.path("jitter"),
                    "0 has no effect on UniformReqRate (a fixed gap)",
                );
            } else {
                exponential = true;
                c.jitter = Some(j);
                self.mapped(
                    p.path("jitter"),
                    &to("jitter"),
                    Some(format!(
                        "a uniform rate with jitter {j} is our ExponentialReqRate with that \
                         jitter (gap = mean·(1 − jitter) + Exp(mean)·jitter)"
                    )),
                );
            }
        }
        if let Some(range) = self.range(p, "prompt_size_min", "prompt_size_max", to, "input_length")
        {
            c.input_length = range;
        }
        if let Some(range) = self.range(
            p,
            "output_tokens_min",
            "output_tokens_max",
            to,
            "output_length",
        ) {
            c.output_length = range;
        }
        self.ignore(
            p,
            "default_prefix_length",
            "Opal's request generator stores it but never uses it: every prompt it makes is \
             token ids 0 to n-1, whatever this says",
        );
        self.nested_prompts = true;
        let generator = if exponential {
            GeneratorConfig::ExponentialReqRate(c)
        } else {
            GeneratorConfig::UniformReqRate(c)
        };
        Some(StageConfig {
            total_requests,
            time_duration_sec,
            priority: Default::default(),
            generator,
        })
    }

    /// A uniform length from a `min`/`max` pair (either may be missing: the other bound is kept).
    fn range(
        &mut self,
        p: &mut Obj,
        min_key: &str,
        max_key: &str,
        to: &impl Fn(&str) -> String,
        field: &str,
    ) -> Option<LengthDist> {
        let min = self.whole::<u32>(p, min_key);
        let max = self.whole::<u32>(p, max_key);
        let (lo, hi) = match (min, max) {
            (None, None) => return None,
            (Some(lo), Some(hi)) => (lo, hi),
            (Some(lo), None) => (lo, lo.max(1024)),
            (None, Some(hi)) => (hi.min(128), hi),
        };
        let target = join(&to(field), "min");
        if min.is_some() {
            self.mapped(p.path(min_key), &target, Some("uniform".into()));
        }
        if max.is_some() {
            self.mapped(
                p.path(max_key),
                &join(&to(field), "max"),
                Some("uniform".into()),
            );
        }
        Some(LengthDist::uniform(lo, hi))
    }

    fn trace(&mut self, p: &mut Obj, to: &impl Fn(&str) -> String) -> Option<StageConfig> {
        let (total_requests, time_duration_sec) = self.stop_conditions(p, to);
        let mut c = TraceConfig::default();
        if let Some(f) = self.string(p, "trace_file") {
            c.trace_file = f;
            self.mapped(p.path("trace_file"), &to("trace_file"), None);
        }
        if let Some(m) = self.number(p, "multiplier_to_sec") {
            // Our trace timestamps are milliseconds, scaled by time_scale: Opal's factor to
            // seconds is time_scale / 1000.
            c.time_scale = m * 1000.0;
            self.mapped(
                p.path("multiplier_to_sec"),
                &to("time_scale"),
                Some(format!(
                    "time_scale = multiplier_to_sec × 1000 = {} (our timestamps are in ms)",
                    c.time_scale
                )),
            );
        }
        let chunk = self.whole::<u32>(p, "chunk_size");
        if let Some(h) = chunk {
            c.hash_block_size = h;
            self.mapped(
                p.path("chunk_size"),
                &to("hash_block_size"),
                Some("Opal's tokens per hash id".into()),
            );
        }
        if let Some(h) = self.whole::<u32>(p, "hash_block_size") {
            if chunk.is_some_and(|n| n != h) {
                self.problems.push(
                    p.path("hash_block_size"),
                    format!(
                        "{h} disagrees with chunk_size {}, which already sets the tokens per \
                         hash id",
                        c.hash_block_size
                    ),
                );
            }
            c.hash_block_size = h;
            self.mapped(p.path("hash_block_size"), &to("hash_block_size"), None);
        }
        Some(StageConfig {
            total_requests,
            time_duration_sec,
            priority: Default::default(),
            generator: GeneratorConfig::Trace(c),
        })
    }

    /// Where the original's own behaviour, which no key states, departs from vLLM's.
    fn differences(&mut self) {
        let mut found = Vec::new();
        if self.nested_prompts {
            found.push(
                "opal_compat.shared_prompt_ids: Opal's synthetic prompts are all token ids 0 \
                 to n-1, each a prefix of every longer one, so nearly all of a prompt is a \
                 cache hit and prefill is nearly free; here each prompt is its own tokens, \
                 prefilled whole (a higher TTFT, and decode steps stretched by long prefills)."
                    .to_string(),
            );
        }
        found.extend(
            [
                "opal_compat.persistent_batch and frozen_chunks: Opal rebuilds its batch only \
                 when a request completes, each prefill chunk fixed (and priced whole) until \
                 then; here every step is planned anew, as vLLM does, so waiting requests \
                 start sooner (a lower TTFT tail).",
                "opal_compat.step_delays: Opal waits 1 ms before each batch build and after \
                 completions, and writes the completed requests' KV to the tiers before going \
                 on; vLLM does neither (a lower TPOT here).",
                "opal_compat.prefill_step: Opal's prefill step emits no token, so a request \
                 takes output + 1 steps; vLLM samples the first token at the end of the \
                 prefill.",
            ]
            .map(String::from),
        );
        self.report.behaviours = found;
    }

    /// Settings that combine several Opal keys, applied once everything is read.
    fn settle(&mut self) {
        for (from, to, note) in OPAL_DEFAULTS {
            if self.report.mapping(from).is_none() {
                self.mapped(from.to_string(), to, Some(note.to_string()));
            }
        }
        if !self.event_intervals.is_empty() {
            let interval = self
                .event_intervals
                .iter()
                .map(|(_, t)| *t)
                .fold(f64::NEG_INFINITY, f64::max);
            self.scenario.router.kv_event_interval = interval;
            for (from, _) in std::mem::take(&mut self.event_intervals) {
                self.mapped(
                    from,
                    "router.kv_event_interval",
                    Some(format!(
                        "the router's KV view is as stale as the slower of the worker's \
                         event coalescing and the router's collection: {interval} s"
                    )),
                );
            }
        }
        if self.scaling {
            let n = self.scenario.simulation.num_workers.max(1);
            self.scenario.router.autoscaler.min_workers = n;
            self.mapped(
                "simulation.num_workers".into(),
                "router.autoscaler.min_workers",
                Some(
                    "Opal never scales down; min_workers = num_workers keeps the cluster at \
                     least that size (ours may still remove workers it added, after the \
                     cool-down)"
                        .into(),
                ),
            );
        }
    }
}

/// Opal keys whose default differs from ours, set by [`Importer::opal_defaults`]: the Opal
/// path, our path, and what the key's absence means.
const OPAL_DEFAULTS: [(&str, &str, &str); 3] = [
    (
        "worker.inference_params.model",
        "worker.timing.model",
        "absent: Opal's default roofline formula, our opal-analytical",
    ),
    (
        "worker.vllm_params.gpu_memory_utilization",
        "worker.gpu_memory_utilization",
        "absent: Opal gives the KV cache all GPU memory the weights leave: 1.0",
    ),
    (
        "worker.vllm_params.enable_gpu_apc",
        "worker.enable_prefix_caching",
        "absent: Opal's default false (no GPU prefix cache)",
    ),
];

/// Our decimal GB (10⁹ bytes) for Opal's GB of 2³⁰ bytes. When the quotient rounds down, the
/// double just above it is taken, so that `capacity_gb · 10⁹` never falls short of Opal's
/// bytes and a tier holds as many whole chunks as Opal's (15 GB of 40 MiB chunks is 384, not
/// 383).
fn gib_to_gb(gib: f64) -> f64 {
    let bytes = gib * (1u64 << 30) as f64;
    let gb = bytes / BYTES_PER_GB;
    if gb > 0.0 && gb * BYTES_PER_GB < bytes {
        // The next double up (f64::next_up is newer than our MSRV).
        f64::from_bits(gb.to_bits() + 1)
    } else {
        gb
    }
}

/// Opal's tier section names, in its default order.
const OPAL_TIERS: [&str; 3] = ["CPUMemory", "LocalNVMe", "DistributedFS"];

fn opal_tier(name: &str) -> Option<&'static str> {
    OPAL_TIERS
        .into_iter()
        .find(|t| t.eq_ignore_ascii_case(name))
}

/// Our catalogue name for an Opal model name (case-insensitive; an organisation prefix such
/// as `ibm-granite/` is dropped).
fn catalogue_name(name: &str) -> Option<&'static str> {
    let bare = name.rsplit('/').next().unwrap_or(name);
    catalogue::catalogue()
        .into_iter()
        .map(|(n, _)| n)
        .find(|n| n.eq_ignore_ascii_case(bare))
}

/// Our catalogue GPU for an Opal GPU name (`H100` is our `H100-SXM`, `A100` our `A100-80GB`).
fn catalogue_gpu(name: &str) -> Option<GpuSpec> {
    let ours = match name.to_ascii_uppercase().as_str() {
        "H100" | "H100-SXM" | "H100_SXM" | "H100SXM" => "H100-SXM",
        "A100" | "A100-80GB" | "A100_80GB" => "A100-80GB",
        _ => name,
    };
    hardware::lookup(ours)
}
