//! `chess-server`: reads settings, starts telemetry, runs the server until Ctrl-C or SIGTERM.

use std::process::ExitCode;

use chess_server::{Application, Settings, shutdown_signal, telemetry};
use clap::Parser;

#[tokio::main]
async fn main() -> ExitCode {
    let settings = Settings::parse();
    telemetry::init(settings.log_format);
    let app = match Application::build(settings).await {
        Ok(app) => app,
        Err(error) => {
            tracing::error!(error = %error, "the server could not start");
            eprintln!("chess-server: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!("chess-server: open {}", app.url());
    match app.run_until_stopped(shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(error = %error, "the server stopped with an error");
            ExitCode::FAILURE
        }
    }
}
