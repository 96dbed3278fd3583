//! Extractors every route may use: a JSON body whose rejections are API
//! errors, and the client's address.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{Extensions, HeaderMap};

use crate::http::error::ApiError;
use crate::http::forwarded::TrustedProxies;

/// `Json` whose rejections are API errors with the `invalid_body` code.
#[derive(Debug)]
pub struct JsonBody<T>(pub T);

impl<T, S> FromRequest<S> for JsonBody<T>
where
    Json<T>: FromRequest<S, Rejection = JsonRejection>,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<JsonBody<T>, ApiError> {
        match Json::<T>::from_request(request, state).await {
            Ok(Json(value)) => Ok(JsonBody(value)),
            Err(rejection) => Err(ApiError::client(
                rejection.status(),
                "invalid_body",
                rejection.body_text(),
            )),
        }
    }
}

/// The client's address: the TCP peer's, or, when the peer is a trusted
/// proxy, the one its forwarding header names ([`TrustedProxies`], which the
/// server adds to every request's extensions). Every limit kept per address
/// and every place that names a client reads it here.
///
/// Without connect info (a router driven without the listener) every client
/// shares the unspecified address; without [`TrustedProxies`] no header is
/// read and the client is the peer.
#[derive(Clone, Copy, Debug)]
pub struct ClientAddress(pub IpAddr);

impl ClientAddress {
    /// The client address of a request with these `extensions` and `headers`.
    pub fn of(extensions: &Extensions, headers: &HeaderMap) -> ClientAddress {
        let Some(ConnectInfo(peer)) = extensions.get::<ConnectInfo<SocketAddr>>() else {
            return ClientAddress(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
        };
        ClientAddress(match extensions.get::<TrustedProxies>() {
            Some(proxies) => proxies.client_address(peer.ip(), headers),
            None => peer.ip().to_canonical(),
        })
    }
}

impl<S: Send + Sync> FromRequestParts<S> for ClientAddress {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        _: &S,
    ) -> Result<ClientAddress, Self::Rejection> {
        Ok(ClientAddress::of(&parts.extensions, &parts.headers))
    }
}
