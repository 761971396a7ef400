package sqsapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The parts of Signature Version 4 that a request carries.
const (
	signingAlgorithm = "AWS4-HMAC-SHA256"
	amzDateHeader    = "X-Amz-Date"
	amzDateFormat    = "20060102T150405Z"
	scopeDateFormat  = "20060102"
	scopeTerminator  = "aws4_request"
	signingService   = "sqs"
	// maxClockSkew is how far a request's X-Amz-Date may be from the server's clock, as
	// AWS allows.
	maxClockSkew = 15 * time.Minute
)

// signatureVerifier checks AWS Signature Version 4 against the configured credentials.
type signatureVerifier struct {
	// secrets are the secret access keys by access key ID.
	secrets map[string]string
	now     func() time.Time
}

// authorization is the parsed Authorization header of a signed request.
type authorization struct {
	accessKeyID   string
	scopeDate     string
	region        string
	service       string
	signedHeaders []string
	signature     []byte
}

// verify checks that r, whose body is body, is signed with the secret of a configured
// access key: the canonical request rebuilt from what arrived (method, path, query, the
// signed headers and the SHA-256 of the body itself, so that a changed body does not
// match), the string to sign, the key derived for the request's date, region and service,
// and a constant-time comparison.
func (v *signatureVerifier) verify(r *http.Request, body []byte) error {
	header := r.Header.Get("Authorization")
	if header == "" {
		return fail(errMissingAuthentication, "Request is missing Authentication Token")
	}
	auth, err := parseAuthorization(header)
	if err != nil {
		return err
	}
	secret, ok := v.secrets[auth.accessKeyID]
	if !ok {
		return fail(errInvalidClientTokenID, "The security token included in the request is invalid.")
	}
	signedAt, err := v.checkDate(r, auth)
	if err != nil {
		return err
	}
	scope := strings.Join([]string{auth.scopeDate, auth.region, auth.service, scopeTerminator}, "/")
	canonical := canonicalRequest(r, auth.signedHeaders, body)
	stringToSign := strings.Join([]string{signingAlgorithm, signedAt, scope, hexSHA256([]byte(canonical))}, "\n")
	key := signingKey(secret, auth.scopeDate, auth.region, auth.service)
	if !hmac.Equal(hmacSHA256(key, stringToSign), auth.signature) {
		return fail(errSignatureDoesNotMatch, "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.")
	}
	return nil
}

// checkDate returns the request's X-Amz-Date after checking that the credential is scoped
// to its day and to SQS, and that it lies within maxClockSkew of the server's clock.
func (v *signatureVerifier) checkDate(r *http.Request, auth authorization) (string, error) {
	text := r.Header.Get(amzDateHeader)
	signedAt, err := time.Parse(amzDateFormat, text)
	if err != nil {
		return "", fail(errIncompleteSignature, "Authorization header requires existence of a valid 'X-Amz-Date' header (%s).", amzDateFormat)
	}
	if auth.scopeDate != signedAt.Format(scopeDateFormat) {
		return "", fail(errSignatureDoesNotMatch, "Credential should be scoped to a valid date: %s, not %s.", signedAt.Format(scopeDateFormat), auth.scopeDate)
	}
	if auth.service != signingService {
		return "", fail(errSignatureDoesNotMatch, "Credential should be scoped to correct service: '%s'.", signingService)
	}
	now := v.now().UTC()
	switch {
	case signedAt.Before(now.Add(-maxClockSkew)):
		return "", fail(errSignatureDoesNotMatch, "Signature expired: %s is now earlier than %s (%s - 15 min.)",
			text, now.Add(-maxClockSkew).Format(amzDateFormat), now.Format(amzDateFormat))
	case signedAt.After(now.Add(maxClockSkew)):
		return "", fail(errSignatureDoesNotMatch, "Signature not yet current: %s is still later than %s (%s + 15 min.)",
			text, now.Add(maxClockSkew).Format(amzDateFormat), now.Format(amzDateFormat))
	}
	return text, nil
}

// parseAuthorization reads "AWS4-HMAC-SHA256 Credential=AKID/date/region/service/aws4_request,
// SignedHeaders=a;b;host, Signature=hex".
func parseAuthorization(header string) (authorization, error) {
	incomplete := fail(errIncompleteSignature, "The Authorization header must be AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=….")
	algorithm, rest, ok := strings.Cut(header, " ")
	if !ok || algorithm != signingAlgorithm {
		return authorization{}, incomplete
	}
	fields := map[string]string{}
	for part := range strings.SplitSeq(rest, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return authorization{}, incomplete
		}
		fields[name] = value
	}
	credential := strings.Split(fields["Credential"], "/")
	signature, err := hex.DecodeString(fields["Signature"])
	signedHeaders := strings.Split(fields["SignedHeaders"], ";")
	if len(credential) != 5 || credential[0] == "" || credential[4] != scopeTerminator ||
		err != nil || len(signature) != sha256.Size || !slices.Contains(signedHeaders, "host") {
		return authorization{}, incomplete
	}
	return authorization{
		accessKeyID: credential[0], scopeDate: credential[1], region: credential[2], service: credential[3],
		signedHeaders: signedHeaders, signature: signature,
	}, nil
}

// canonicalRequest rebuilds the canonical request of Signature Version 4 from r.
func canonicalRequest(r *http.Request, signedHeaders []string, body []byte) string {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	// The path as sent, encoded once more, as the SDKs do for every service but S3.
	path := r.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	b.WriteString(uriEncode(path, false))
	b.WriteByte('\n')
	b.WriteString(canonicalQuery(r.URL.RawQuery))
	b.WriteByte('\n')
	for _, name := range signedHeaders {
		b.WriteString(name)
		b.WriteByte(':')
		b.WriteString(canonicalHeaderValue(r, name))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(signedHeaders, ";"))
	b.WriteByte('\n')
	b.WriteString(hexSHA256(body))
	return b.String()
}

// canonicalQuery encodes every name and value of the query, then sorts the pairs.
func canonicalQuery(rawQuery string) string {
	if rawQuery == "" {
		return ""
	}
	var pairs []string
	for part := range strings.SplitSeq(rawQuery, "&") {
		name, value, _ := strings.Cut(part, "=")
		name, _ = url.QueryUnescape(name)
		value, _ = url.QueryUnescape(value)
		pairs = append(pairs, uriEncode(name, true)+"="+uriEncode(value, true))
	}
	slices.Sort(pairs)
	return strings.Join(pairs, "&")
}

// canonicalHeaderValue returns the values of a signed header, each trimmed of spaces with
// its inner runs of spaces collapsed to one, joined by commas. Only spaces: a tab inside a
// value is kept, as the SDKs keep it when they sign.
func canonicalHeaderValue(r *http.Request, name string) string {
	switch name {
	case "host":
		return collapseSpaces(r.Host)
	case "content-length":
		if r.Header.Get("Content-Length") == "" && r.ContentLength >= 0 {
			return strconv.FormatInt(r.ContentLength, 10)
		}
	}
	values := r.Header.Values(name)
	canonical := make([]string, len(values)) // not in place: Values shares the request's slice
	for i, v := range values {
		canonical[i] = collapseSpaces(v)
	}
	return strings.Join(canonical, ",")
}

// collapseSpaces trims the white space around s, as the SDKs do, and collapses its inner
// runs of spaces to one.
func collapseSpaces(s string) string {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "  ") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' && s[i-1] == ' ' { // s does not start with a space
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// uriEncode percent-encodes every byte but the unreserved characters of RFC 3986, and the
// slash unless encodeSlash.
func uriEncode(s string, encodeSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		unreserved := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~'
		if unreserved || c == '/' && !encodeSlash {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// signingKey derives the key of one day, region and service from a secret access key.
func signingKey(secret, date, region, service string) []byte {
	key := hmacSHA256([]byte("AWS4"+secret), date)
	key = hmacSHA256(key, region)
	key = hmacSHA256(key, service)
	return hmacSHA256(key, scopeTerminator)
}

func hmacSHA256(key []byte, data string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(data))
	return mac.Sum(nil)
}

func hexSHA256(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
