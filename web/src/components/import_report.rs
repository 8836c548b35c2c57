//! What an import of an original Opal config did with each of its keys: mapped (to where,
//! with a note when the meaning changed) or ignored (why), and where the original behaves
//! unlike vLLM, so that the figures will differ, with a button that turns on the
//! `opal_compat` switches that reproduce the original. Dismissable.

use crate::components::disclosure::Disclosure;
use opal::document::ImportReport;
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`ImportReportPanel`].
#[derive(Properties, PartialEq, Clone)]
pub struct ImportReportProps {
    /// The report, and the file it came from.
    pub report: Rc<(String, ImportReport)>,
    /// Closes the panel.
    pub on_dismiss: Callback<()>,
    /// Turns on every `opal_compat` switch.
    pub on_reproduce: Callback<()>,
}

/// The import report panel.
#[function_component(ImportReportPanel)]
pub fn import_report_panel(props: &ImportReportProps) -> Html {
    let (source, report) = &*props.report;
    let close = props.on_dismiss.reform(|_: MouseEvent| ());
    let reproduce = props.on_reproduce.reform(|_: MouseEvent| ());
    html! {
        <section class="import-report" aria-label="Opal import report" data-testid="import-report">
            <header>
                <h3>{ format!("Imported {source} (original Opal format): {} keys mapped, {} ignored", report.mapped.len(), report.ignored.len()) }</h3>
                <button type="button" onclick={close} aria-label="Dismiss the import report">{ "Dismiss" }</button>
            </header>
            <Disclosure title="Mapped">
                <table>
                    <thead><tr><th>{ "Opal key" }</th><th>{ "Scenario field" }</th><th>{ "Note" }</th></tr></thead>
                    <tbody>
                        { for report.mapped.iter().map(|m| html! {
                            <tr><td><code>{ &m.from }</code></td><td><code>{ &m.to }</code></td>
                                <td>{ m.note.clone().unwrap_or_default() }</td></tr>
                        }) }
                    </tbody>
                </table>
            </Disclosure>
            if !report.ignored.is_empty() {
                <Disclosure title="Ignored">
                    <table>
                        <thead><tr><th>{ "Opal key" }</th><th>{ "Why" }</th></tr></thead>
                        <tbody>
                            { for report.ignored.iter().map(|i| html! {
                                <tr><td><code>{ &i.from }</code></td><td>{ &i.reason }</td></tr>
                            }) }
                        </tbody>
                    </table>
                </Disclosure>
            }
            if report.compat {
                <p data-testid="import-compat">{ "opal_compat is on: runs follow the original's prompts, batching and delays where they depart from vLLM, and give its figures." }</p>
            } else if !report.behaviours.is_empty() {
                <Disclosure title="Why the figures will differ from the original's" testid="import-behaviours">
                    <ul>
                        { for report.behaviours.iter().map(|d| html! { <li>{ d }</li> }) }
                    </ul>
                    <button type="button" onclick={reproduce} data-testid="reproduce-original">
                        { "Run as the original does (turn on every opal_compat switch)" }
                    </button>
                </Disclosure>
            }
            if !report.differs.is_empty() {
                <Disclosure title="Unlike the original, whatever opal_compat says" testid="import-differs">
                    <ul>
                        { for report.differs.iter().map(|d| html! { <li>{ d }</li> }) }
                    </ul>
                </Disclosure>
            }
        </section>
    }
}
