//! The app frame: header, scenario editor, results.

use yew::prelude::*;

const DEFAULT_SCENARIO: &str = "{\n  \"simulation\": { \"seed\": 42 }\n}\n";

/// The whole page.
#[function_component(App)]
pub fn app() -> Html {
    let text = use_state(|| DEFAULT_SCENARIO.to_string());
    let problems = use_state(|| engine::api::check_scenario(DEFAULT_SCENARIO));
    let info = engine::api::info();

    let on_input = {
        let text = text.clone();
        let problems = problems.clone();
        Callback::from(move |e: InputEvent| {
            let area: web_sys::HtmlTextAreaElement = e.target_unchecked_into();
            let value = area.value();
            problems.set(engine::api::check_scenario(&value));
            text.set(value);
        })
    };

    html! {
        <div class="app">
            <header class="app-header">
                <h1>{ "Opal" }</h1>
                <span class="tagline">{ "LLM serving simulator, in your browser" }</span>
                <span class="version" data-testid="engine-version">{ format!("engine {}", info.version) }</span>
            </header>
            <main class="app-main">
                <section class="editor" aria-label="Scenario editor">
                    <h2>{ "Scenario" }</h2>
                    <textarea class="scenario-json" spellcheck="false" value={(*text).clone()} oninput={on_input} />
                </section>
                <section class="results" aria-label="Results">
                    <h2>{ "Results" }</h2>
                    <div data-testid="validation">
                        if problems.is_empty() {
                            <p class="ok">{ "Scenario is valid." }</p>
                        } else {
                            <ul class="problems">
                                { for problems.iter().map(|p| html! { <li><code>{ &p.path }</code>{ " " }{ &p.message }</li> }) }
                            </ul>
                        }
                    </div>
                </section>
            </main>
        </div>
    }
}
