//! The server as clients see it: HTTP calls with a cookie, and game sockets
//! that yield JSON messages.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// Longest wait for one server message while the server is up.
pub const MESSAGE_TIMEOUT: Duration = Duration::from_secs(20);

/// A person: the cookie that identifies them, and whether it is an account.
#[derive(Clone, Debug)]
pub struct Person {
    /// `chess_guest=...` or `chess_session=...`.
    pub cookie: String,
    pub account: bool,
}

/// Why a call failed: a short code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallError(pub String);

/// The HTTP side of the server.
#[derive(Clone, Debug)]
pub struct Api {
    http: reqwest::Client,
    base_url: String,
}

impl Api {
    pub fn new(http: reqwest::Client, base_url: String) -> Api {
        Api { http, base_url }
    }

    /// `GET /api/me` without a cookie: a new guest.
    pub async fn new_guest(&self) -> Result<Person, CallError> {
        let response = self
            .http
            .get(format!("{}/api/me", self.base_url))
            .send()
            .await
            .map_err(unreachable)?;
        let cookie = set_cookie(&response, "chess_guest")
            .ok_or_else(|| CallError(format!("no_cookie_{}", response.status().as_u16())))?;
        Ok(Person {
            cookie,
            account: false,
        })
    }

    /// Signs up a new account `username` (no guest history) and keeps its
    /// session cookie.
    pub async fn sign_up(&self, username: &str, password: &str) -> Result<Person, CallError> {
        let body = json!({ "username": username, "password": password });
        let (person, _) = self
            .signed_in("/api/account/sign-up", &body, "sign_up")
            .await?;
        Ok(person)
    }

    /// `POST path` with `body` and no cookie, which answers with a session
    /// cookie: the account, signed in, and the answer; `{refusal}_{status}`
    /// when no session came back.
    async fn signed_in(
        &self,
        path: &str,
        body: &Value,
        refusal: &str,
    ) -> Result<(Person, Value), CallError> {
        let response = self
            .http
            .post(format!("{}{path}", self.base_url))
            .json(body)
            .send()
            .await
            .map_err(unreachable)?;
        let status = response.status().as_u16();
        let cookie = set_cookie(&response, "chess_session")
            .ok_or_else(|| CallError(format!("{refusal}_{status}")))?;
        let answer = response.json().await.unwrap_or(Value::Null);
        Ok((
            Person {
                cookie,
                account: true,
            },
            answer,
        ))
    }

    /// Renews an account's session cookie (`GET /api/account` hands out a
    /// fresh one past half its life; a run can outlast one token).
    pub async fn renew(&self, person: &mut Person) -> Result<(), CallError> {
        if !person.account {
            return Ok(());
        }
        let response = self
            .http
            .get(format!("{}/api/account", self.base_url))
            .header("cookie", &person.cookie)
            .send()
            .await
            .map_err(unreachable)?;
        if !response.status().is_success() {
            return Err(CallError(format!("renew_{}", response.status().as_u16())));
        }
        if let Some(cookie) = set_cookie(&response, "chess_session") {
            person.cookie = cookie;
        }
        Ok(())
    }

    /// `POST path` as `person` with a JSON body: the JSON answer (`null`
    /// for an empty one); a refusal's error code.
    pub async fn post(
        &self,
        path: &str,
        person: &Person,
        body: &Value,
    ) -> Result<Value, CallError> {
        let response = self
            .http
            .post(format!("{}{path}", self.base_url))
            .header("cookie", &person.cookie)
            .json(body)
            .send()
            .await
            .map_err(unreachable)?;
        let status = response.status();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        refused(status, body)
    }

    /// `GET path` as `person`: the JSON answer; a refusal's error code.
    pub async fn get(&self, path: &str, person: &Person) -> Result<Value, CallError> {
        let response = self
            .http
            .get(format!("{}{path}", self.base_url))
            .header("cookie", &person.cookie)
            .send()
            .await
            .map_err(unreachable)?;
        let status = response.status();
        let body: Value = response
            .json()
            .await
            .map_err(|_| CallError(format!("http_{}_bad_json", status.as_u16())))?;
        refused(status, body)
    }

    /// A class account's first sign-in (`POST /api/account/first-password`):
    /// the account, signed in, and the answer (its `id` and `username`).
    pub async fn first_password(
        &self,
        username: &str,
        password: &str,
        new_password: &str,
    ) -> Result<(Person, Value), CallError> {
        let body =
            json!({ "username": username, "password": password, "new_password": new_password });
        self.signed_in("/api/account/first-password", &body, "first_password")
            .await
    }

    /// A timed game: `white` creates a challenge, `black` takes the seat.
    /// Rated (only between two accounts) or casual.
    pub async fn create_game(
        &self,
        white: &Person,
        black: &Person,
        time_control: &Value,
        rated: bool,
    ) -> Result<String, CallError> {
        let challenge = json!({ "time_control": time_control, "color": "white", "rated": rated });
        let created = self.post("/api/challenges", white, &challenge).await?;
        let game_id = created["game_id"]
            .as_str()
            .ok_or_else(|| CallError("http_bad_json".to_owned()))?
            .to_owned();
        self.post(&format!("/api/games/{game_id}/join"), black, &json!({}))
            .await?;
        Ok(game_id)
    }

    /// `GET /api/games/{id}` as `person` (or as a spectator): the state.
    pub async fn state(&self, game_id: &str, person: Option<&Person>) -> Result<Value, CallError> {
        let mut request = self
            .http
            .get(format!("{}/api/games/{game_id}", self.base_url));
        if let Some(person) = person {
            request = request.header("cookie", &person.cookie);
        }
        let response = request.send().await.map_err(unreachable)?;
        if !response.status().is_success() {
            return Err(CallError(format!("http_{}", response.status().as_u16())));
        }
        response
            .json()
            .await
            .map_err(|_| CallError("http_bad_json".to_owned()))
    }

    /// The game socket of `game_id` with `person`'s cookie.
    pub async fn socket(&self, game_id: &str, person: &Person) -> Result<Socket, CallError> {
        let ws_base = self.base_url.replacen("http://", "ws://", 1);
        let connect_error = || CallError("socket_connect".to_owned());
        let mut request = format!("{ws_base}/api/games/{game_id}/socket")
            .into_client_request()
            .map_err(|_| connect_error())?;
        let cookie = HeaderValue::from_str(&person.cookie).map_err(|_| connect_error())?;
        request.headers_mut().insert("cookie", cookie);
        let (ws, _) = tokio_tungstenite::connect_async(request)
            .await
            .map_err(|_| connect_error())?;
        Ok(Socket {
            ws,
            close_code: None,
        })
    }
}

/// A request that reached no server.
fn unreachable(_: reqwest::Error) -> CallError {
    CallError("http_unreachable".to_owned())
}

/// `body` when `status` is a success, else the error code it names (or
/// `http_<status>` when it names none).
fn refused(status: reqwest::StatusCode, body: Value) -> Result<Value, CallError> {
    if status.is_success() {
        return Ok(body);
    }
    let code = body["error"]["code"]
        .as_str()
        .map_or_else(|| format!("http_{}", status.as_u16()), str::to_owned);
    Err(CallError(code))
}

/// `name=value` of the `Set-Cookie` header for cookie `name`.
fn set_cookie(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .filter_map(|value| value.split(';').next())
        .find(|pair| {
            pair.split_once('=')
                .is_some_and(|(key, value)| key.trim() == name && !value.is_empty())
        })
        .map(str::to_owned)
}

/// A game socket.
#[derive(Debug)]
pub struct Socket {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    /// The code of the server's Close frame, once one arrived.
    close_code: Option<u16>,
}

/// How reading a socket ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Closed {
    /// The connection closed or broke (a killed server, mostly).
    Gone,
    /// Nothing arrived within [`MESSAGE_TIMEOUT`].
    Silent,
    /// The server sent a frame that is not JSON.
    BadJson(String),
}

impl Socket {
    /// Sends one JSON message; `false` when the connection is gone.
    pub async fn send(&mut self, message: &Value) -> bool {
        self.ws
            .send(Message::Text(message.to_string().into()))
            .await
            .is_ok()
    }

    /// The next JSON message (tungstenite answers Ping frames on the way).
    pub async fn recv(&mut self) -> Result<Value, Closed> {
        loop {
            let next = tokio::time::timeout(MESSAGE_TIMEOUT, self.ws.next())
                .await
                .map_err(|_| Closed::Silent)?;
            match next {
                Some(Ok(Message::Text(text))) => {
                    return serde_json::from_str(text.as_str())
                        .map_err(|_| Closed::BadJson(text.as_str().chars().take(200).collect()));
                }
                Some(Ok(Message::Close(frame))) => {
                    self.close_code = frame.map(|frame| u16::from(frame.code));
                    return Err(Closed::Gone);
                }
                Some(Err(_)) | None => return Err(Closed::Gone),
                Some(Ok(_)) => {}
            }
        }
    }

    /// The code the server closed the connection with (`1012` when its node
    /// stops), if it sent a Close frame: a dead node sends none.
    pub fn close_code(&self) -> Option<u16> {
        self.close_code
    }

    /// Closes the connection politely.
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }
}
