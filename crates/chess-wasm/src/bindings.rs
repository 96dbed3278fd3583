//! The JavaScript face of the crate (wasm-bindgen): strings, numbers and
//! JSON text over [`LocalGame`] and [`Analyst`], which hold all the logic and
//! are tested natively. Times are JavaScript's milliseconds (`Date.now()`).

use std::time::Duration;

use wasm_bindgen::prelude::*;

use crate::{Analyst, Command, LocalGame, Message, Opponent};

#[wasm_bindgen]
extern "C" {
    /// `performance.now()`: the page's (or worker's, or Node's) monotonic
    /// clock, which the engine keeps its time with.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;

    /// A JavaScript function called with one string.
    #[wasm_bindgen(typescript_type = "(report: string) => void")]
    pub type ReportCallback;

    #[wasm_bindgen(method, js_name = call)]
    fn call(this: &ReportCallback, this_arg: &JsValue, report: &str);
}

/// The engine's clock in the browser: `std::time::Instant` does not exist there.
fn page_time() -> Duration {
    Duration::from_secs_f64(performance_now().max(0.0) / 1_000.0)
}

/// JavaScript milliseconds as the game's: never negative, whole.
fn millis(ms: f64) -> u64 {
    if ms.is_finite() && ms > 0.0 {
        ms as u64
    } else {
        0
    }
}

fn json(messages: &[Message]) -> String {
    serde_json::to_string(messages).unwrap_or_else(|_| "[]".to_owned())
}

fn js_error(err: impl std::fmt::Display) -> JsError {
    JsError::new(&err.to_string())
}

/// A game on one screen or against the computer (see [`LocalGame`]).
#[wasm_bindgen(js_name = LocalGame)]
#[derive(Debug)]
pub struct JsLocalGame {
    inner: LocalGame,
}

#[wasm_bindgen(js_class = LocalGame)]
impl JsLocalGame {
    /// A new game: `opponent` is `{"kind":"one_screen"}` or
    /// `{"kind":"computer","level":2,"color":"black"}`, `time_control`
    /// `"5+3"` or `"correspondence"`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        id: String,
        opponent: &str,
        time_control: &str,
        now_ms: f64,
    ) -> Result<JsLocalGame, JsError> {
        let opponent: Opponent = serde_json::from_str(opponent).map_err(js_error)?;
        let inner = LocalGame::new(id, opponent, time_control, millis(now_ms)).map_err(js_error)?;
        Ok(JsLocalGame { inner })
    }

    /// A game saved by `save()`.
    pub fn restore(text: &str) -> Result<JsLocalGame, JsError> {
        LocalGame::restore(text)
            .map(|inner| JsLocalGame { inner })
            .map_err(js_error)
    }

    /// The game as JSON text to keep.
    pub fn save(&self) -> String {
        self.inner.save()
    }

    #[wasm_bindgen(getter)]
    pub fn id(&self) -> String {
        self.inner.id().to_owned()
    }

    /// The `state` message (JSON).
    pub fn state(&self, now_ms: f64) -> String {
        self.inner.state(millis(now_ms)).to_string()
    }

    /// Plays one message of the game socket (JSON) and answers the messages
    /// a server would send back (a JSON array). `new_id` names the game a
    /// rematch would start.
    pub fn command(&mut self, command: &str, now_ms: f64, new_id: String) -> String {
        let messages = match serde_json::from_str::<Command>(command) {
            Ok(command) => self.inner.command(&command, millis(now_ms), || new_id),
            Err(err) => vec![crate::protocol::error("bad_message", &err.to_string())],
        };
        json(&messages)
    }

    /// The computer's move `uci` for the position after `ply` moves.
    pub fn computer_move(&mut self, uci: &str, ply: u32, now_ms: f64) -> String {
        json(&self.inner.computer_move(uci, ply, millis(now_ms)))
    }

    /// Flags a fallen clock; the messages of the end, if any.
    pub fn check_time(&mut self, now_ms: f64) -> String {
        json(&self.inner.check_time(millis(now_ms)))
    }

    /// When a clock falls if nobody moves (JavaScript milliseconds), if one runs.
    pub fn flag_deadline(&self) -> Option<f64> {
        self.inner.game().flag_deadline().map(|ms| ms as f64)
    }

    /// The engine's search for the computer's move now (JSON), or nothing.
    pub fn computer_search(&self, now_ms: f64) -> Option<String> {
        self.inner
            .computer_search(millis(now_ms))
            .map(|request| request.to_string())
    }

    /// Whether the game is over.
    #[wasm_bindgen(getter)]
    pub fn over(&self) -> bool {
        self.inner.game().is_over()
    }

    /// The game a rematch just started, once.
    pub fn take_rematch(&mut self) -> Option<JsLocalGame> {
        self.inner.take_rematch().map(|inner| JsLocalGame { inner })
    }

    /// The game's PGN; `date` is the `[Date]` tag (`2026.12.07`).
    pub fn pgn(&self, date: &str) -> String {
        self.inner.pgn(date)
    }
}

/// The engine of a page (see [`Analyst`]).
#[wasm_bindgen(js_name = Engine)]
#[derive(Debug)]
pub struct JsEngine {
    inner: Analyst,
}

#[wasm_bindgen(js_class = Engine)]
impl JsEngine {
    /// An engine whose easy level draws its choices from `seed`.
    #[wasm_bindgen(constructor)]
    pub fn new(seed: u32) -> JsEngine {
        JsEngine {
            inner: Analyst::new(u64::from(seed), page_time),
        }
    }

    /// Forgets earlier searches (a new game).
    pub fn new_game(&mut self) {
        self.inner.new_game();
    }

    /// Runs a search (a JSON request, see `SearchRequest`), calling
    /// `on_iteration` with each completed iteration's report (JSON); answers
    /// the final report (JSON).
    pub fn search(
        &mut self,
        request: &str,
        on_iteration: &ReportCallback,
    ) -> Result<String, JsError> {
        let report = self
            .inner
            .search(request, |iteration| {
                if let Ok(text) = serde_json::to_string(iteration) {
                    on_iteration.call(&JsValue::NULL, &text);
                }
            })
            .map_err(js_error)?;
        serde_json::to_string(&report).map_err(js_error)
    }
}
