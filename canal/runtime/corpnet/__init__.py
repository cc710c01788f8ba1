"""Canal behind a corporate network: the CA certificates a sandbox and its image builds trust
(``sandbox.ca_certificates``), read and checked as a person approves them. The upstream proxy is the
sandbox layer's (``canal.sandbox.egress_upstream``), the mirrors are the project image's."""
