package proxy

// Verdict is the proxy's decision on one connection attempt.
type Verdict string

// The verdicts. Allowed means the allow-list admitted the target (the
// dial or the upstream may still have failed: see Conn.Error); Refused
// means the proxy answered the client itself and opened nothing.
const (
	Allowed Verdict = "allowed"
	Refused Verdict = "refused"
)

// The forms of a request, as Conn.Form records them.
const (
	FormConnect  = "connect"  // CONNECT host:port
	FormAbsolute = "absolute" // GET http://host:port/path
	FormOrigin   = "origin"   // GET /path: refused, this is a proxy
	FormInvalid  = "invalid"  // unreadable, too large, or another form
)

// The stable codes of Conn.Code, for a refusal or a failure.
const (
	CodeNotAllowed     = "not_allowed"          // the target is not on the allow-list
	CodeIPLiteral      = "ip_literal"           // an IP literal not listed as IP:port, or a non-canonical one
	CodePrivateAddress = "private_address"      // the name resolves to a non-public address and is not listed exactly
	CodeHostMismatch   = "host_mismatch"        // absolute-form Host header disagrees with the URI's host
	CodeBadRequest     = "bad_request"          // unparsable request or authority, origin-form, or a scheme other than http
	CodeHeaderTooLarge = "header_too_large"     // the request header exceeds Config.MaxHeaderBytes
	CodeTooMany        = "too_many_connections" // Config.MaxConns connections already open
	CodeResolveFailed  = "resolve_failed"       // the host's resolver found no address
	CodeDialFailed     = "dial_failed"          // no resolved address accepted the connection
	CodeUpstreamFailed = "upstream_failed"      // the upstream broke the exchange
)

// Conn is the record of one connection attempt through the proxy (one
// CONNECT tunnel, or one absolute-form request), allowed or refused. It
// is plain data, for the engine to record on the step.
type Conn struct {
	// Form is FormConnect, FormAbsolute, FormOrigin or FormInvalid.
	Form string `json:"form"`
	// Method is the request's method ("CONNECT", "GET", ...), if read.
	Method string `json:"method,omitempty"`
	// Authority is the target as requested, host:port (the CONNECT
	// authority or the absolute URI's host).
	Authority string `json:"authority,omitempty"`
	// Rule is the allow-list entry that admitted the target.
	Rule string `json:"rule,omitempty"`
	// IP is the address dialled (resolved once, on the host), or the
	// address refused.
	IP string `json:"ip,omitempty"`
	// Verdict is Allowed or Refused.
	Verdict Verdict `json:"verdict"`
	// Code is a stable code (the Code* constants) for a refusal or a
	// failure; Reason says it in words, as the client was told.
	Code   string `json:"code,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Status is the HTTP status the client received: 200 for an
	// established tunnel, the upstream's for an absolute-form request,
	// the proxy's own (400, 403, 431, 502, 503) otherwise.
	Status int `json:"status,omitempty"`
	// BytesUp and BytesDown count bytes sent to the upstream and to the
	// client (for absolute-form, the request and the response as
	// forwarded, headers included).
	BytesUp   int64 `json:"bytes_up"`
	BytesDown int64 `json:"bytes_down"`
	// Error is what ended an allowed exchange abnormally, if anything.
	Error string `json:"error,omitempty"`
}
