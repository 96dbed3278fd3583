//! Settings from flags and environment variables, with defaults that need no set-up.

use std::fmt;
use std::net::IpAddr;
use std::path::PathBuf;

use clap::Parser;

use crate::http::forwarded::{ForwardedHeader, ProxyNetwork};
use crate::telemetry::LogFormat;

/// Everything the server can be told at start-up. Every flag has an environment
/// variable (listed in `.env.example`) and a default, so `cargo run` needs nothing.
#[derive(Clone, Parser)]
#[command(
    name = "chess-server",
    version,
    about = "The authoritative online chess server"
)]
pub struct Settings {
    /// Address to listen on.
    #[arg(long, env = "HOST", default_value = "127.0.0.1")]
    pub host: IpAddr,

    /// Port to listen on (0 picks a free port).
    #[arg(long, env = "PORT", default_value_t = 8080)]
    pub port: u16,

    /// `sqlite://path/to/file.db` (embedded, created on start) or `postgres://...`.
    #[arg(long, env = "DATABASE_URL", default_value = "sqlite://data/chess.db")]
    pub database_url: String,

    /// Folder for the embedded database's generated secret.
    #[arg(long, env = "CHESS_DATA_DIR", default_value = "data")]
    pub data_dir: PathBuf,

    /// Secret that signs identity cookies (at least 32 bytes). When unset, a random
    /// one is generated once and kept in `<data dir>/secret`.
    #[arg(long, env = "CHESS_SECRET", hide_env_values = true)]
    pub secret: Option<Secret>,

    /// Account session signing keys: `kid:secret` entries (secrets of at least
    /// 32 bytes), comma separated, the signing key first; older keys still
    /// verify, which is how keys rotate. When unset, sessions are signed with
    /// the server secret above.
    #[arg(long, env = "SESSION_KEYS", hide_env_values = true)]
    pub session_keys: Option<String>,

    /// Development mode: tolerate a weak or placeholder `CHESS_SECRET` or
    /// `SESSION_KEYS` (never in a real deployment). Without it, a configured secret
    /// must be strong; leaving both unset stays fine: a strong secret is then
    /// generated in the data folder.
    #[arg(long, env = "CHESS_DEVELOPMENT", default_value_t = false)]
    pub development: bool,

    /// Mark the session and guest cookies `Secure` (set this when served over HTTPS).
    #[arg(long, env = "SECURE_COOKIES", default_value_t = false)]
    pub secure_cookies: bool,

    /// Milliseconds each side has to make its first move before the server aborts
    /// the game (online timed games).
    #[arg(long, env = "FIRST_MOVE_DEADLINE_MS", default_value_t = 30_000)]
    pub first_move_deadline_ms: u64,

    /// Origins allowed to open WebSockets and to send state-changing requests
    /// (POST, DELETE, ...), comma separated. Default: this server's own
    /// `http://` origins (`127.0.0.1`, `localhost` and the listen host).
    /// Requests without an `Origin` header (curl, scripts) are not from a
    /// browser page and are allowed.
    #[arg(long, env = "ALLOWED_ORIGINS", value_delimiter = ',')]
    pub allowed_origins: Vec<String>,

    /// Serve the web client from this folder instead of the copy built into the
    /// binary (for working on the client without rebuilding the server).
    #[arg(long, env = "WEB_DIR")]
    pub web_dir: Option<PathBuf>,

    /// Reverse proxies and load balancers whose forwarding header is
    /// believed: IP addresses and networks (`10.0.0.5`, `10.0.0.0/8`,
    /// `fd00::/8`), comma separated. A request whose TCP peer is one of them
    /// comes from the address its header (`--client-address-header`) names,
    /// read from the right past the other trusted proxies. Default: none; the
    /// client's address is the TCP peer and no header is read.
    #[arg(long, env = "TRUSTED_PROXIES", value_delimiter = ',')]
    pub trusted_proxies: Vec<ProxyNetwork>,

    /// The header the trusted proxies write the client's address in:
    /// `x-forwarded-for` or `forwarded` (RFC 7239). Only this one is read: a
    /// proxy passes the other one on from the client untouched.
    #[arg(long, env = "CLIENT_ADDRESS_HEADER", value_enum,
          default_value_t = ForwardedHeader::XForwardedFor)]
    pub client_address_header: ForwardedHeader,

    /// New guests one address may create per hour (first visits without a
    /// guest cookie); past it, `GET /api/me` answers `429`.
    #[arg(long, env = "NEW_GUESTS_PER_ADDRESS_PER_HOUR", default_value_t = 60)]
    pub new_guests_per_address_per_hour: usize,

    /// `text` (coloured only on a terminal) or `json` (one object per line, for
    /// log collectors).
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Largest WebSocket message accepted, in bytes.
    #[arg(long, env = "WS_MAX_MESSAGE_BYTES", default_value_t = 4096)]
    pub ws_max_message_bytes: usize,

    /// Messages per second a game socket may send on average.
    #[arg(long, env = "WS_RATE_PER_SECOND", default_value_t = 20)]
    pub ws_rate_per_second: u32,

    /// Messages a game socket may send in a burst above the average rate.
    #[arg(long, env = "WS_RATE_BURST", default_value_t = 40)]
    pub ws_rate_burst: u32,

    /// Milliseconds a game socket may leave the server's ping unanswered (no
    /// message, no pong) before it is taken as lost, as when a phone loses
    /// its signal without closing the connection. Counted from the ping, and
    /// an answer the server had not read yet counts: a busy server does not
    /// close sockets for its own lateness.
    #[arg(long, env = "WS_SILENCE_TIMEOUT_MS", default_value_t = 5_000)]
    pub ws_silence_timeout_ms: u64,

    /// This node's name among the nodes sharing the database (default: host
    /// name and port). Every node needs its own: a node restarted under the
    /// same name drops its earlier run's premoves at once instead of after a
    /// heartbeat timeout.
    #[arg(long, env = "NODE_NAME")]
    pub node_name: Option<String>,
    /// Address of the Prometheus `/metrics` listener, e.g. `127.0.0.1:9464`.
    /// Unset: no metrics endpoint. It is a port of its own, never the public
    /// one, so the figures stay with whoever can reach that address.
    #[arg(long, env = "METRICS_LISTEN")]
    pub metrics_listen: Option<std::net::SocketAddr>,

    /// Game and lobby WebSockets this node keeps open at once; past it an
    /// upgrade is refused with `429 busy`. Default: the open-file limit less
    /// a tenth kept for the database, the listener and plain HTTP requests.
    #[arg(long, env = "MAX_SOCKETS")]
    pub max_sockets: Option<usize>,

    /// Game changes that may wait for the node's writer; past it a command is
    /// refused with the socket code `busy` instead of waiting in line.
    /// Default: the socket cap. A game's owner has at most one change in
    /// line (it waits for its commit before it takes another command), so
    /// the line is already bounded by the live games; a smaller cap would
    /// refuse moves whenever one commit is slow at a busy hour, with nothing
    /// to gain in memory (the changes are held by their owners anyway).
    #[arg(long, env = "WRITE_QUEUE")]
    pub write_queue: Option<usize>,

    /// Microseconds the node's writer may wait for more changes when a
    /// batch is small and many games are live, so that one commit (and its
    /// log sync) serves more moves; 0 commits every batch at once. At most
    /// 100,000. Players thinking between moves then cost the database fewer,
    /// larger commits for a little latency on the first move of a batch.
    #[arg(long, env = "COMMIT_LINGER_US", default_value_t = 1_000,
          value_parser = clap::value_parser!(u64).range(0..=100_000))]
    pub commit_linger_us: u64,

    /// Requests creating or joining games and seeks served at once; past it
    /// they are refused with `429 busy` (a slow database otherwise piles them up).
    #[arg(long, env = "MAX_CONCURRENT_CREATIONS", default_value_t = 64)]
    pub max_concurrent_creations: usize,

    /// Milliseconds late the node may run ready tasks, sustained over half a
    /// second, before it refuses new games and seeks with `429 busy` so that
    /// the games in play keep their time (sockets of games in play are still
    /// accepted); 0 never refuses for lateness. A writer queue half full
    /// refuses them too, whatever this says.
    #[arg(long, env = "BUSY_LAG_MS", default_value_t = 250)]
    pub busy_lag_ms: u64,

    /// The host platform's endpoint that pays rewards: each credited win is
    /// POSTed to it as signed JSON until it answers 2xx (docs/rewards.md).
    /// Unset: rewards are recorded (and listed to the platform, with a secret)
    /// but not sent. Requires REWARD_WEBHOOK_SECRET.
    #[arg(long, env = "REWARD_WEBHOOK_URL")]
    pub reward_webhook_url: Option<reqwest::Url>,

    /// Secret (at least 32 bytes) shared with the host platform: signs every
    /// reward request (X-Chess-Signature) and authenticates the platform's
    /// reconciliation requests (GET /api/rewards/requests).
    #[arg(long, env = "REWARD_WEBHOOK_SECRET", hide_env_values = true)]
    pub reward_webhook_secret: Option<Secret>,

    /// The first retry's ceiling of a reward request, in ms (tests shrink the
    /// whole schedule; not for operators).
    #[arg(
        long,
        env = "REWARD_RETRY_FIRST_MS",
        default_value_t = 1_000,
        hide = true
    )]
    pub reward_retry_first_ms: u64,

    /// The cap of a reward request's retry ceiling, in ms.
    #[arg(
        long,
        env = "REWARD_RETRY_MAX_MS",
        default_value_t = 3_600_000,
        hide = true
    )]
    pub reward_retry_max_ms: u64,

    /// How long one delivery may take before it counts as failed, in ms; a
    /// claim's lease is this plus five seconds.
    #[arg(
        long,
        env = "REWARD_WEBHOOK_TIMEOUT_MS",
        default_value_t = 10_000,
        hide = true
    )]
    pub reward_webhook_timeout_ms: u64,

    /// How often the deliverer looks for due requests unprompted, in ms.
    #[arg(long, env = "REWARD_POLL_MS", default_value_t = 1_000, hide = true)]
    pub reward_poll_ms: u64,
    /// The server's public base URL as browsers reach it
    /// (`https://chess.example.org`), with no path. Sign-in through the
    /// platform sends the provider back to `<public url>/auth/oidc/callback`.
    #[arg(long, env = "PUBLIC_URL")]
    pub public_url: Option<String>,

    /// The host platform's OpenID Connect issuer (`https://id.example.org`):
    /// people sign in with their platform account, found through its
    /// discovery document. Unset: sign-in is local only. Needs
    /// `OIDC_CLIENT_ID`, `OIDC_CLIENT_SECRET` and `PUBLIC_URL`.
    #[arg(long, env = "OIDC_ISSUER")]
    pub oidc_issuer: Option<String>,

    /// This server's client id at the provider.
    #[arg(long, env = "OIDC_CLIENT_ID")]
    pub oidc_client_id: Option<String>,

    /// This server's client secret at the provider.
    #[arg(long, env = "OIDC_CLIENT_SECRET", hide_env_values = true)]
    pub oidc_client_secret: Option<String>,

    /// The ID token claim a new platform account's username is made from
    /// (made to fit the username rules, and unique with a suffix); the
    /// account itself is the provider's `sub`, so a later change of name
    /// changes nothing.
    #[arg(
        long,
        env = "OIDC_USERNAME_CLAIM",
        default_value = "preferred_username"
    )]
    pub oidc_username_claim: String,

    /// The provider's name on the sign-in button ("Sign in with …").
    /// Default: the issuer's host name.
    #[arg(long, env = "OIDC_PROVIDER_NAME")]
    pub oidc_provider_name: Option<String>,

    /// Local accounts (username and password): `false` refuses local
    /// sign-up and sign-in, so the platform's accounts are the only
    /// signed-in accounts (the ones rewards are paid to).
    #[arg(long, env = "LOCAL_ACCOUNTS", default_value_t = true,
          action = clap::ArgAction::Set)]
    pub local_accounts: bool,
}

impl Settings {
    /// Defaults for everything, as `chess-server` with no flags and no environment.
    pub fn defaults() -> Settings {
        Settings::parse_from(["chess-server"])
    }
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("database_url", &redact_url(&self.database_url))
            .field("data_dir", &self.data_dir)
            .field("secret", &self.secret)
            .field("session_keys", &self.session_keys.as_ref().map(|_| "***"))
            .field("development", &self.development)
            .field("secure_cookies", &self.secure_cookies)
            .field("first_move_deadline_ms", &self.first_move_deadline_ms)
            .field("allowed_origins", &self.allowed_origins)
            .field("web_dir", &self.web_dir)
            .field("trusted_proxies", &self.trusted_proxies)
            .field("client_address_header", &self.client_address_header)
            .field(
                "new_guests_per_address_per_hour",
                &self.new_guests_per_address_per_hour,
            )
            .field("log_format", &self.log_format)
            .field("ws_max_message_bytes", &self.ws_max_message_bytes)
            .field("ws_rate_per_second", &self.ws_rate_per_second)
            .field("ws_rate_burst", &self.ws_rate_burst)
            .field("ws_silence_timeout_ms", &self.ws_silence_timeout_ms)
            .field("node_name", &self.node_name)
            .field("metrics_listen", &self.metrics_listen)
            .field("max_sockets", &self.max_sockets)
            .field("write_queue", &self.write_queue)
            .field("commit_linger_us", &self.commit_linger_us)
            .field("max_concurrent_creations", &self.max_concurrent_creations)
            .field("busy_lag_ms", &self.busy_lag_ms)
            .field(
                "reward_webhook_url",
                &self
                    .reward_webhook_url
                    .as_ref()
                    .map(|url| redact_url(url.as_str())),
            )
            .field("reward_webhook_secret", &self.reward_webhook_secret)
            .field("reward_retry_first_ms", &self.reward_retry_first_ms)
            .field("reward_retry_max_ms", &self.reward_retry_max_ms)
            .field("reward_webhook_timeout_ms", &self.reward_webhook_timeout_ms)
            .field("reward_poll_ms", &self.reward_poll_ms)
            .field("public_url", &self.public_url)
            .field("oidc_issuer", &self.oidc_issuer)
            .field("oidc_client_id", &self.oidc_client_id)
            .field(
                "oidc_client_secret",
                &self.oidc_client_secret.as_ref().map(|_| "***"),
            )
            .field("oidc_username_claim", &self.oidc_username_claim)
            .field("oidc_provider_name", &self.oidc_provider_name)
            .field("local_accounts", &self.local_accounts)
            .finish()
    }
}

/// Hides a password in `scheme://user:password@host/...`.
fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let credentials = &url[scheme_end + 3..at];
            match credentials.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme_end + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

/// A signing secret; never printed.
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    /// The secret's bytes, for signing.
    pub fn expose(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl std::str::FromStr for Secret {
    type Err = String;
    fn from_str(value: &str) -> Result<Secret, String> {
        if value.len() < 32 {
            return Err("the secret must be at least 32 bytes (256 bits) long".to_owned());
        }
        Ok(Secret(value.to_owned()))
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_hides_secret_and_database_password() {
        let mut settings = Settings::defaults();
        settings.secret = Some("s".repeat(40).parse().expect("long enough"));
        settings.database_url = "postgres://chess:hunter2@db/chess".to_owned();
        let shown = format!("{settings:?}");
        assert!(!shown.contains("ssss"), "{shown}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("postgres://chess:***@db/chess"), "{shown}");
    }

    #[test]
    fn metrics_are_off_unless_an_address_is_given() {
        assert_eq!(Settings::defaults().metrics_listen, None);
        let settings = Settings::parse_from(["chess-server", "--metrics-listen", "127.0.0.1:9464"]);
        assert_eq!(
            settings.metrics_listen,
            Some("127.0.0.1:9464".parse().expect("an address"))
        );
        assert!(
            Settings::try_parse_from(["chess-server", "--metrics-listen", "9464"]).is_err(),
            "a bare port is not an address"
        );
    }

    #[test]
    fn the_commit_linger_is_bounded() {
        assert_eq!(Settings::defaults().commit_linger_us, 1_000);
        let off = Settings::parse_from(["chess-server", "--commit-linger-us", "0"]);
        assert_eq!(off.commit_linger_us, 0);
        for refused in ["100001", "-1", "1ms"] {
            assert!(
                Settings::try_parse_from(["chess-server", "--commit-linger-us", refused]).is_err(),
                "{refused} accepted"
            );
        }
    }

    #[test]
    fn trusted_proxies_are_none_unless_listed_and_bad_entries_stop_the_start() {
        let defaults = Settings::defaults();
        assert!(defaults.trusted_proxies.is_empty());
        assert_eq!(
            defaults.client_address_header,
            ForwardedHeader::XForwardedFor
        );
        let settings = Settings::parse_from([
            "chess-server",
            "--trusted-proxies",
            "127.0.0.1, 10.0.0.0/8,fd00::/8",
            "--client-address-header",
            "forwarded",
        ]);
        let listed: Vec<String> = settings
            .trusted_proxies
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(listed, ["127.0.0.1/32", "10.0.0.0/8", "fd00::/8"]);
        assert_eq!(settings.client_address_header, ForwardedHeader::Forwarded);
        for refused in [
            "10.0.0.1/8",
            "10.0.0.0/8,,127.0.0.1",
            "localhost",
            "10.0.0.0/33",
        ] {
            let error = Settings::try_parse_from(["chess-server", "--trusted-proxies", refused])
                .err()
                .unwrap_or_else(|| panic!("{refused} accepted"));
            assert!(
                error.to_string().contains("--trusted-proxies"),
                "{refused}: {error}"
            );
        }
        assert!(
            Settings::try_parse_from(["chess-server", "--client-address-header", "x-real-ip"])
                .is_err()
        );
    }

    #[test]
    fn short_secret_is_refused() {
        assert!("short".parse::<Secret>().is_err());
    }
}
