# The chess server as one small image: the binary, the web client and nothing else.
# Migrations are compiled into the binary (sqlx::migrate!), so the image needs no SQL files.
#
#   docker build -t chess-server .
#   docker run -p 8080:8080 -v chess-data:/app/data chess-server          # embedded SQLite
#   docker compose up                                                    # two nodes on Postgres

FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY crates ./crates
COPY migrations ./migrations
RUN cargo build --release --locked -p chess-server -p chess-engine \
 && strip target/release/chess-server target/release/chess-engine

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home /app chess
WORKDIR /app
COPY --from=build /src/target/release/chess-server /usr/local/bin/chess-server
COPY --from=build /src/target/release/chess-engine /usr/local/bin/chess-engine
COPY web ./web
RUN mkdir -p data && chown chess data
USER chess
# Listen on every interface inside the container; the host decides what to publish.
ENV HOST=0.0.0.0 PORT=8080 WEB_DIR=/app/web CHESS_DATA_DIR=/app/data
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s CMD ["/bin/sh", "-c", "exec 3<>/dev/tcp/127.0.0.1/8080"]
CMD ["chess-server"]
