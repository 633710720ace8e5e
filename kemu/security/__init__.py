"""The security core, synchronous and socket-free: listener configuration, the SASL mechanisms' server
side (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER with unsecured JWTs), the SCRAM credential store, and the
mapping of a TLS certificate's subject onto a principal. The server drives it over its connections."""
