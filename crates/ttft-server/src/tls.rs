//! A self-signed certificate for `localhost` and `127.0.0.1`, made at start, for the optional
//! HTTPS/HTTP/2 listener. Browsers must be told to accept it once (or run with
//! `--ignore-certificate-errors` in tests).

/// `(certificate PEM, private key PEM)`.
pub fn self_signed() -> std::io::Result<(Vec<u8>, Vec<u8>)> {
    let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
    let cert = rcgen::generate_simple_self_signed(names).map_err(std::io::Error::other)?;
    Ok((
        cert.cert.pem().into_bytes(),
        cert.signing_key.serialize_pem().into_bytes(),
    ))
}
