package proxy

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Methods whose purpose is to send the request back. TRACE (RFC 9110
// §9.3.8) answers with the request as the origin received it, headers
// and all; TRACK is IIS's old spelling of it. Inside an intercepted
// connection the request carries the injected header, so either would
// hand the agent the value. CONNECT inside an intercepted connection
// (refused there only) asks the upstream for a tunnel: it would carry the
// header to whatever the upstream joins it to, and what flowed after it
// would no longer be answers net reads and looks at. It has no use there.
var reflectiveMethods = []string{"TRACE", "TRACK"}

// methodOverrides are the headers some frameworks read as the request's
// method (a POST that says it is a TRACE); their names are compared as
// routeHeaders' are (headerValues): CGI and WSGI stacks read
// X_HTTP_Method_Override as the first, which Go leaves uncanonical.
var methodOverrides = []string{"X-Http-Method-Override", "X-Http-Method", "X-Method-Override"}

// methodParam is the form field some frameworks read as a POST's method:
// Symfony and Laravel (which take TRACE) from the body's fields, then the
// query's; Rails' Rack::MethodOverride from the body (not TRACE or
// TRACK). The query is in the request's head, and checked; a body is not
// read for it (doc.go, Limitations).
const methodParam = "_method"

// queryMethods are the values of every field of a query some server may
// read as _method: names and values decoded (one left as it is when it
// does not decode), fields split at '&' and ';', and a name read as PHP
// reads it, leading blanks dropped and ' ', '.' and '[' taken for '_'
// (.method and %5Fmethod are _method to it).
func queryMethods(rawQuery string) []string {
	unescape := func(s string) string {
		if u, err := url.QueryUnescape(s); err == nil {
			return u
		}
		return s
	}
	var vs []string
	for _, field := range strings.FieldsFunc(rawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
		k, v, _ := strings.Cut(field, "=")
		k = strings.Map(func(r rune) rune {
			if r == ' ' || r == '.' || r == '[' {
				return '_'
			}
			return r
		}, strings.TrimLeft(unescape(k), " "))
		if strings.EqualFold(k, methodParam) {
			vs = append(vs, unescape(v))
		}
	}
	return vs
}

// reflectiveMethod names the method that makes r one net refuses, or "".
// Methods are compared without regard to case (RFC 9110 makes them
// case-sensitive, but not every server does), and a method-override
// header, or a _method field in the query, counts as the method. connect
// says whether CONNECT is one of them (inside an intercepted connection;
// net's own CONNECT is the tunnel itself).
func reflectiveMethod(r *http.Request, connect bool) string {
	match := func(m string) string {
		m = strings.TrimSpace(m)
		for _, x := range reflectiveMethods {
			if strings.EqualFold(m, x) {
				return x
			}
		}
		if connect && strings.EqualFold(m, http.MethodConnect) {
			return http.MethodConnect
		}
		return ""
	}
	if m := match(r.Method); m != "" {
		return m
	}
	for _, k := range methodOverrides {
		for _, v := range headerValues(r.Header, k) {
			if m := match(v); m != "" {
				return m
			}
		}
	}
	for _, v := range queryMethods(r.URL.RawQuery) {
		if m := match(v); m != "" {
			return m
		}
	}
	return ""
}

// reflectLimit is the largest body (with a Content-Length) net reads
// whole before answering, so that an answer carrying the value becomes a
// clean 502; a longer one, or one of unknown length, is passed on as it
// comes through reflectScanner.
const reflectLimit = 1 << 20

// errReflected ends a body that carried the injected value.
var errReflected = errors.New("the answer carries the injected value")

// reflectedHead says where in an answer's head value appears verbatim:
// "status" (the reason phrase), "header" (a name or a value), or "" (also
// for an empty value: nothing to hide).
func reflectedHead(resp *http.Response, value string) string {
	if value == "" {
		return ""
	}
	if strings.Contains(resp.Status, value) {
		return "status"
	}
	if headerHolds(resp.Header, value) {
		return "header"
	}
	return ""
}

// headerHolds says whether value (not empty) is in a name or a value of h.
func headerHolds(h http.Header, value string) bool {
	if value == "" {
		return false
	}
	for k, vs := range h {
		// Names: Go has made them canonical (ghp_x became Ghp_x).
		if strings.Contains(strings.ToLower(k), strings.ToLower(value)) {
			return true
		}
		for _, v := range vs {
			if strings.Contains(v, value) {
				return true
			}
		}
	}
	return false
}

// reflectScanner passes a body on and fails with errReflected, before
// passing on any byte of it, if the value appears in it. It holds back
// the last len(value)-1 bytes it read until more come or the body ends,
// so a value split across reads is found whole; no byte it has passed on
// can begin a match. It holds one read and that tail, however long the
// body. end, when set, is asked at the body's end (the trailers, read
// only then).
type reflectScanner struct {
	src   io.Reader
	value []byte
	end   func() error

	buf          []byte // [lo:safe] may be passed on, [safe:hi] is held back
	lo, safe, hi int
	err          error
}

// reflectScanRead is how much one read of the source asks for.
const reflectScanRead = 32 << 10

func newReflectScanner(src io.Reader, value []byte, end func() error) *reflectScanner {
	return &reflectScanner{src: src, value: value, end: end, buf: make([]byte, reflectScanRead+len(value))}
}

func (s *reflectScanner) Read(p []byte) (int, error) {
	for s.lo == s.safe {
		if s.err != nil {
			return 0, s.err
		}
		// The held tail goes to the front; the read fills the rest.
		n := copy(s.buf, s.buf[s.lo:s.hi])
		s.lo, s.safe, s.hi = 0, 0, n
		m, err := s.src.Read(s.buf[s.hi:])
		s.hi += m
		// The tail alone is shorter than the value: a match found here
		// ends in the bytes just read.
		if bytes.Contains(s.buf[:s.hi], s.value) {
			s.err = errReflected
			s.lo, s.safe, s.hi = 0, 0, 0
			return 0, s.err
		}
		if err == io.EOF && s.end != nil {
			if e := s.end(); e != nil {
				err = e
				s.hi = 0 // nothing more goes out
			}
		}
		if err != nil {
			// Nothing more can complete a match: what is held may go
			// (unless the end itself was the refusal).
			s.err = err
			s.safe = s.hi
			continue
		}
		s.safe = max(0, s.hi-(len(s.value)-1))
	}
	n := copy(p, s.buf[s.lo:s.safe])
	s.lo += n
	return n, nil
}
