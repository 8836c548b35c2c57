//! What an import of an original Opal config did with each of its keys: mapped (to where,
//! with a note when the meaning changed) or ignored (why), and where the original behaves
//! unlike vLLM, so that the figures will differ. Dismissable.

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
}

/// The import report panel.
#[function_component(ImportReportPanel)]
pub fn import_report_panel(props: &ImportReportProps) -> Html {
    let (source, report) = &*props.report;
    let close = props.on_dismiss.reform(|_: MouseEvent| ());
    html! {
        <section class="import-report" aria-label="Opal import report" data-testid="import-report">
            <header>
                <h3>{ format!("Imported {source} (original Opal format): {} keys mapped, {} ignored", report.mapped.len(), report.ignored.len()) }</h3>
                <button type="button" onclick={close} aria-label="Dismiss the import report">{ "Dismiss" }</button>
            </header>
            <details open=true>
                <summary>{ "Mapped" }</summary>
                <table>
                    <thead><tr><th>{ "Opal key" }</th><th>{ "Scenario field" }</th><th>{ "Note" }</th></tr></thead>
                    <tbody>
                        { for report.mapped.iter().map(|m| html! {
                            <tr><td><code>{ &m.from }</code></td><td><code>{ &m.to }</code></td>
                                <td>{ m.note.clone().unwrap_or_default() }</td></tr>
                        }) }
                    </tbody>
                </table>
            </details>
            if !report.ignored.is_empty() {
                <details open=true>
                    <summary>{ "Ignored" }</summary>
                    <table>
                        <thead><tr><th>{ "Opal key" }</th><th>{ "Why" }</th></tr></thead>
                        <tbody>
                            { for report.ignored.iter().map(|i| html! {
                                <tr><td><code>{ &i.from }</code></td><td>{ &i.reason }</td></tr>
                            }) }
                        </tbody>
                    </table>
                </details>
            }
            if !report.differs.is_empty() {
                <details open=true data-testid="import-differs">
                    <summary>{ "Why the figures will differ from the original's" }</summary>
                    <ul>
                        { for report.differs.iter().map(|d| html! { <li>{ d }</li> }) }
                    </ul>
                </details>
            }
        </section>
    }
}
