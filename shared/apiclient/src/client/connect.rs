//! The connection under a client's TLS layer, for both of the plugins' HTTP clients
//! (the API server's, [`super::builder`], and `-f https://…`'s, `resource::url`):
//! straight to the server, or through the proxy hyper-util's [`Matcher`] picks for the
//! destination.
//!
//! Hand-written around hyper-util's pieces for one thing its connectors do not do: a
//! plain-http request through a proxy must be sent in absolute form
//! (`GET http://host/path`), and hyper-util's client only does that for a connection
//! that says it is proxied ([`Conn`], as reqwest has one).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::uri::{Scheme, Uri};
use hyper_rustls::{HttpsConnector, MaybeHttpsStream};
use hyper_util::client::legacy::connect::proxy::{SocksV5, Tunnel};
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::client::proxy::matcher::{Intercept, Matcher};
use hyper_util::rt::TokioIo;
use tower::BoxError;
use tower::ServiceExt as _;

/// Which proxy, if any, a destination is reached through.
#[derive(Clone)]
pub struct Proxies {
    matcher: Arc<Matcher>,
    /// Go's rule for proxies from the environment: `localhost` and loopback addresses
    /// are always reached directly (`golang.org/x/net/http/httpproxy`'s `useProxy`).
    loopback_direct: bool,
}

impl Proxies {
    /// `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY` as Go's
    /// `ProxyFromEnvironment` reads them (hyper-util's matcher, plus Go's loopback rule).
    pub fn from_env() -> Self {
        Self::environment(Matcher::from_env())
    }

    /// `matcher`, read as the environment is (the loopback rule applies).
    pub fn environment(matcher: Matcher) -> Self {
        Self {
            matcher: Arc::new(matcher),
            loopback_direct: true,
        }
    }

    /// The proxy for `dst`, if it is not reached directly.
    pub fn intercept(&self, dst: &Uri) -> Option<Intercept> {
        if self.loopback_direct && is_loopback(dst) {
            return None;
        }
        self.matcher.intercept(dst)
    }
}

/// `matcher` for every destination, loopback included: a kubeconfig's `proxy-url`, as
/// client-go's `http.ProxyURL` applies it.
impl From<Matcher> for Proxies {
    fn from(matcher: Matcher) -> Self {
        Self {
            matcher: Arc::new(matcher),
            loopback_direct: false,
        }
    }
}

/// Whether the connector speaks `proxy`'s protocol: http, https and socks5, as
/// client-go does.
pub fn supported(proxy: &Uri) -> bool {
    matches!(
        proxy.scheme_str(),
        Some("http" | "https" | "socks5" | "socks5h")
    )
}

/// `localhost` or a loopback address (Go compares the host name exactly).
fn is_loopback(dst: &Uri) -> bool {
    let host = dst.host().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The connection under the TLS layer: straight to the server, a CONNECT tunnel
/// through a proxy (https URLs), or the proxy itself (plain-http URLs), as
/// hyper-util's [`Matcher`] decides.
#[derive(Clone)]
pub struct Connector {
    tcp: HttpConnector,
    /// TLS to the proxy when its own URL is https; TCP when it is http.
    to_proxy: HttpsConnector<HttpConnector>,
    proxies: Proxies,
}

impl Connector {
    /// Connections for `proxies`, with `tls` (the client's own configuration, as Go's
    /// transport uses it) to a proxy whose URL is https.
    pub fn new(proxies: Proxies, tls: rustls::ClientConfig) -> Self {
        let mut tcp = HttpConnector::new();
        // https destinations reach the TCP connector too, under the TLS layer.
        tcp.enforce_http(false);
        // As Go's dialer (TCP_NODELAY on every connection). Without it, HTTP/2's
        // separate HEADERS and DATA writes meet Nagle's algorithm and the server's
        // delayed ACK: one create after another took 44 ms each on loopback instead
        // of a few (measured: 500 creates one at a time, 22.5 s).
        tcp.set_nodelay(true);
        let to_proxy = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(tcp.clone());
        Self {
            tcp,
            to_proxy,
            proxies,
        }
    }

    /// The proxy rules, for a client that adds a proxy's credentials to a plain-http
    /// request itself.
    pub fn proxies(&self) -> Proxies {
        self.proxies.clone()
    }
}

impl tower::Service<Uri> for Connector {
    type Response = Conn;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Conn, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            let Some(proxy) = this.proxies.intercept(&dst) else {
                if let Some(written) = crate::idn::refused(dst.host().unwrap_or_default()) {
                    return Err(Dialed::unresolvable(&dst, written).into());
                }
                let start = std::time::Instant::now();
                let io = match this.tcp.oneshot(dst.clone()).await {
                    Ok(io) => io,
                    Err(e) => return Err(Dialed::new(&dst, false, e.into()).await.into()),
                };
                if let Ok(peer) = io.inner().peer_addr() {
                    super::debugging::dialed(&peer.to_string(), start.elapsed());
                }
                return Ok(Conn {
                    io: MaybeHttpsStream::Http(io),
                    proxied: false,
                });
            };
            let proxy_uri = proxy.uri().clone();
            if matches!(proxy_uri.scheme_str(), Some("socks5" | "socks5h")) {
                // As Go's transport: the host name goes to the proxy, which resolves it.
                let mut socks = SocksV5::new(proxy_uri, this.tcp).local_dns(false);
                if let Some((user, pass)) = proxy.raw_auth() {
                    socks = socks.with_auth(user.to_string(), pass.to_string());
                }
                let io = socks.oneshot(dst).await?;
                return Ok(Conn {
                    io: MaybeHttpsStream::Http(io),
                    proxied: false,
                });
            }
            if !supported(&proxy_uri) {
                return Err(
                    format!("unsupported proxy {proxy_uri} (only http, https and socks5)").into(),
                );
            }
            if dst.scheme() == Some(&Scheme::HTTPS) {
                let mut tunnel = Tunnel::new(proxy_uri.clone(), this.to_proxy);
                if let Some(auth) = proxy.basic_auth() {
                    tunnel = tunnel.with_auth(auth.clone());
                }
                let io = match tunnel.oneshot(dst).await {
                    Ok(io) => io,
                    Err(e) => return Err(Dialed::new(&proxy_uri, true, e.into()).await.into()),
                };
                Ok(Conn { io, proxied: false })
            } else {
                let io = match this.to_proxy.oneshot(proxy_uri.clone()).await {
                    Ok(io) => io,
                    Err(e) => return Err(Dialed::new(&proxy_uri, true, e).await.into()),
                };
                Ok(Conn { io, proxied: true })
            }
        })
    }
}

/// A connection that could not be made, with the address it was made to, which Go's
/// words name (`dial tcp 127.0.0.1:1: connect: connection refused`, `proxyconnect tcp:
/// …` for a proxy) and hyper-util's errors do not. Its text is its cause's: the Go
/// wording is [`crate::go_net`]'s, read from the fields.
#[derive(Debug)]
pub struct Dialed {
    /// `IP:port` as Go's dialer names it (the first address of a name), or the host
    /// and port as given when the name does not resolve.
    pub addr: String,
    /// The host as given (for a DNS failure: `lookup HOST on …`).
    pub host: String,
    /// Whether the connection was to a proxy.
    pub proxy: bool,
    source: BoxError,
}

impl Dialed {
    async fn new(dst: &Uri, proxy: bool, source: BoxError) -> Self {
        let host = dst
            .host()
            .unwrap_or_default()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = dst
            .port_u16()
            .unwrap_or(if dst.scheme() == Some(&Scheme::HTTP) {
                80
            } else {
                443
            });
        let addr = match host.parse::<std::net::IpAddr>() {
            Ok(ip) => std::net::SocketAddr::new(ip, port).to_string(),
            // Only on this failure path: the address the dial went to, as Go names it
            // (IPv4 first, as Go's dialer tries it first).
            Err(_) => match tokio::net::lookup_host((host.as_str(), port)).await {
                Ok(addrs) => {
                    let addrs: Vec<_> = addrs.collect();
                    addrs
                        .iter()
                        .find(|a| a.is_ipv4())
                        .or(addrs.first())
                        .map_or_else(|| format!("{host}:{port}"), ToString::to_string)
                }
                Err(_) => format!("{host}:{port}"),
            },
        };
        Self {
            addr,
            host,
            proxy,
            source,
        }
    }

    /// A host whose IDNA conversion failed (`crate::idn`): Go dials it as written,
    /// and its resolver refuses it as no domain name before asking any server. Its
    /// cause reads as hyper-util's resolver failure, which [`crate::go_net`] words.
    fn unresolvable(dst: &Uri, written: String) -> Self {
        let port = dst
            .port_u16()
            .unwrap_or(if dst.scheme() == Some(&Scheme::HTTP) {
                80
            } else {
                443
            });
        Self {
            addr: format!("{written}:{port}"),
            host: written,
            proxy: false,
            source: Box::new(std::io::Error::other("dns error")),
        }
    }
}

impl std::fmt::Display for Dialed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.source.fmt(f)
    }
}

impl std::error::Error for Dialed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.source.as_ref())
    }
}

/// A connection that can say it goes to a proxy: hyper-util's client then writes the
/// request line in absolute form (`GET http://host/path`), as a proxy needs it. Its
/// own connectors never say so (hence this wrapper, as reqwest has one).
pub struct Conn {
    io: MaybeHttpsStream<TokioIo<tokio::net::TcpStream>>,
    proxied: bool,
}

impl Connection for Conn {
    fn connected(&self) -> Connected {
        self.io.connected().proxy(self.proxied)
    }
}

impl hyper::rt::Read for Conn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for Conn {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }
}
