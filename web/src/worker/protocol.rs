//! The messages between the page and a simulation worker, as plain JS objects with a
//! `kind` (what `web/worker.js` routes on).
//!
//! Page → worker: `start` {job, scenario, files: [[name, text], …]}, `stop` {job}, `warm`.
//! Worker → page: `progress` {job, fraction, sim_time_s, requests_issued, requests_done},
//! `done` {job, stopped, results: [Uint8Array, …] of `SimulationResults::write_parts`,
//! transferred},
//! `failed` {job, message}, `broken` {message} (the worker itself could not start),
//! `warmed` {results} (an idle warm-up run's bytes, for the page to decode once too),
//! `listening` (sent by `web/worker.js` on `init`: the page's first messages have arrived).

use crate::state::Progress;
use js_sys::{Array, Object, Reflect, Uint8Array};
use opal::simulation::{ResultsReader, SimulationResults, WireError};
use wasm_bindgen::{JsCast, JsValue};

/// A message from a worker to the page, decoded.
pub enum FromWorker {
    /// How far job `job` has got.
    Progress {
        /// The job's id.
        job: u64,
        /// How far it has got.
        progress: Progress,
    },
    /// Job `job` ended (ran out, or `stopped` on request) with these results' bytes.
    Done {
        /// The job's id.
        job: u64,
        /// Stopped before its end.
        stopped: bool,
        /// The results' bytes.
        results: ResultParts,
    },
    /// Job `job` could not run.
    Failed {
        /// The job's id.
        job: u64,
        /// What went wrong.
        message: String,
    },
    /// The worker cannot run anything.
    Broken {
        /// What went wrong.
        message: String,
    },
    /// A warm-up run's results' bytes (see `runner`), decoded and dropped by the page.
    WarmedUp {
        /// The results' bytes.
        results: ResultParts,
    },
    /// The worker has the page's first messages (`web/worker.js` says so on `init`).
    Listening,
}

/// A message from the page to a worker, decoded.
pub enum ToWorker {
    /// Run `scenario` (with the data files it names) as job `job`.
    Start {
        /// The job's id.
        job: u64,
        /// The scenario text.
        scenario: String,
        /// The data files it names: (name, text).
        files: Vec<(String, String)>,
    },
    /// Stop job `job` and report what it reached.
    Stop {
        /// The job's id.
        job: u64,
    },
    /// While idle, run the warm-up scenarios unreported (see `runner`).
    WarmUp,
}

/// A JS object from `(key, value)` pairs.
pub(crate) fn object(fields: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (k, v) in fields {
        let _ = Reflect::set(&o, &JsValue::from_str(k), v);
    }
    o.into()
}

fn field(o: &JsValue, key: &str) -> JsValue {
    Reflect::get(o, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn number(o: &JsValue, key: &str) -> f64 {
    field(o, key).as_f64().unwrap_or(f64::NAN)
}

fn text(o: &JsValue, key: &str) -> String {
    field(o, key).as_string().unwrap_or_default()
}

/// Bytes a part of a run's results holds: a large run's results leave the worker's wasm
/// and enter the page's this much at a time, never as one allocation of their size.
const PART_BYTES: usize = 8 << 20;

/// A run's results as the parts [`SimulationResults::write_parts`] writes, held in JS
/// (outside either wasm's memory) and transferred, not copied, from the worker to the page.
pub struct ResultParts(Array);

impl ResultParts {
    /// `results`' bytes, copied out of the wasm one part at a time.
    pub fn of(results: &SimulationResults) -> Self {
        let parts = Array::new();
        results.write_parts(PART_BYTES, |part| {
            parts.push(&Uint8Array::from(&part[..]));
        });
        Self(parts)
    }

    /// The results, read into the wasm one part at a time.
    pub fn decode(&self) -> Result<SimulationResults, WireError> {
        self.reader()?.finish()
    }

    /// Bytes in all.
    pub fn len(&self) -> usize {
        self.arrays().map(|p| p.length() as usize).sum()
    }

    /// Whether there are no bytes at all (a message without results).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A reader of the results, which copies each part into the wasm when it gets to it.
    pub fn reader(&self) -> Result<ResultsReader<'static>, WireError> {
        let parts: Vec<Uint8Array> = self.arrays().collect();
        ResultsReader::new(self.len(), parts.into_iter().map(|p| p.to_vec()))
    }

    fn arrays(&self) -> impl Iterator<Item = Uint8Array> + '_ {
        self.0.iter().filter_map(|p| p.dyn_into().ok())
    }

    /// The parts' buffers, to transfer with the message.
    fn buffers(&self, transfer: &Array) {
        for part in self.0.iter() {
            if let Ok(part) = part.dyn_into::<Uint8Array>() {
                transfer.push(&part.buffer());
            }
        }
    }
}

/// The `results` parts of a message (none when it has none: decoding then says so).
fn parts(o: &JsValue) -> ResultParts {
    ResultParts(field(o, "results").dyn_into::<Array>().unwrap_or_default())
}

/// Job ids are counters well below 2^53, so they travel exactly as JS numbers.
fn job(o: &JsValue) -> u64 {
    number(o, "job") as u64
}

impl ToWorker {
    /// The message as a JS object.
    pub fn to_js(&self) -> JsValue {
        match self {
            ToWorker::Start {
                job,
                scenario,
                files,
            } => {
                let list: Array = files
                    .iter()
                    .map(|(name, text)| {
                        Array::of2(&JsValue::from_str(name), &JsValue::from_str(text))
                    })
                    .collect();
                object(&[
                    ("kind", "start".into()),
                    ("job", (*job as f64).into()),
                    ("scenario", scenario.as_str().into()),
                    ("files", list.into()),
                ])
            }
            ToWorker::Stop { job } => {
                object(&[("kind", "stop".into()), ("job", (*job as f64).into())])
            }
            ToWorker::WarmUp => object(&[("kind", "warm".into())]),
        }
    }

    /// Reads a message the page sent; `None` for anything else.
    pub fn from_js(data: &JsValue) -> Option<Self> {
        match text(data, "kind").as_str() {
            "start" => {
                let files = field(data, "files")
                    .dyn_into::<Array>()
                    .map(|list| {
                        list.iter()
                            .filter_map(|pair| {
                                let pair = pair.dyn_into::<Array>().ok()?;
                                Some((pair.get(0).as_string()?, pair.get(1).as_string()?))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                Some(ToWorker::Start {
                    job: job(data),
                    scenario: text(data, "scenario"),
                    files,
                })
            }
            "stop" => Some(ToWorker::Stop { job: job(data) }),
            "warm" => Some(ToWorker::WarmUp),
            _ => None,
        }
    }
}

impl FromWorker {
    /// The message as a JS object, and the buffers to transfer rather than copy.
    pub fn to_js(&self) -> (JsValue, Array) {
        let transfer = Array::new();
        let message = match self {
            FromWorker::Progress { job, progress } => object(&[
                ("kind", "progress".into()),
                ("job", (*job as f64).into()),
                (
                    "fraction",
                    progress.fraction.map_or(JsValue::NULL, JsValue::from),
                ),
                ("sim_time_s", progress.sim_time_s.into()),
                ("requests_issued", (progress.requests_issued as f64).into()),
                ("requests_done", (progress.requests_done as f64).into()),
            ]),
            FromWorker::Done {
                job,
                stopped,
                results,
            } => {
                results.buffers(&transfer);
                object(&[
                    ("kind", "done".into()),
                    ("job", (*job as f64).into()),
                    ("stopped", (*stopped).into()),
                    ("results", results.0.clone().into()),
                ])
            }
            FromWorker::Failed { job, message } => object(&[
                ("kind", "failed".into()),
                ("job", (*job as f64).into()),
                ("message", message.as_str().into()),
            ]),
            FromWorker::Broken { message } => object(&[
                ("kind", "broken".into()),
                ("message", message.as_str().into()),
            ]),
            FromWorker::WarmedUp { results } => {
                results.buffers(&transfer);
                object(&[
                    ("kind", "warmed".into()),
                    ("results", results.0.clone().into()),
                ])
            }
            FromWorker::Listening => object(&[("kind", "listening".into())]),
        };
        (message, transfer)
    }

    /// Reads a message a worker sent; `None` for anything else.
    pub fn from_js(data: &JsValue) -> Option<Self> {
        Some(match text(data, "kind").as_str() {
            "progress" => FromWorker::Progress {
                job: job(data),
                progress: Progress {
                    fraction: field(data, "fraction").as_f64(),
                    sim_time_s: number(data, "sim_time_s"),
                    requests_issued: number(data, "requests_issued") as u64,
                    requests_done: number(data, "requests_done") as u64,
                },
            },
            "done" => FromWorker::Done {
                job: job(data),
                stopped: field(data, "stopped").is_truthy(),
                results: parts(data),
            },
            "failed" => FromWorker::Failed {
                job: job(data),
                message: text(data, "message"),
            },
            "broken" => FromWorker::Broken {
                message: text(data, "message"),
            },
            "warmed" => FromWorker::WarmedUp {
                results: parts(data),
            },
            "listening" => FromWorker::Listening,
            _ => return None,
        })
    }
}
