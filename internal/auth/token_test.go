package auth_test

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/socialgw/gateway/internal/auth"
)

const (
	testIssuer   = "socialgw"
	testAudience = "socialgw-api"
	testTTL      = 15 * time.Minute
)

var (
	testSecret = []byte("0123456789abcdef0123456789abcdef-test")
	// testNow is the fixed clock of the tests that check time claims.
	testNow = time.Unix(1_700_000_000, 0)
)

// keyPair is a generated signing key with its PEM and DER encodings.
type keyPair struct {
	priv           crypto.Signer
	pub            crypto.PublicKey
	privPEM        []byte
	pubPEM, pubDER []byte
}

func newKeyPair(priv crypto.Signer) keyPair {
	privDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		panic(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(priv.Public())
	if err != nil {
		panic(err)
	}
	return keyPair{
		priv:    priv,
		pub:     priv.Public(),
		privPEM: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: privDER}),
		pubPEM:  pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}),
		pubDER:  pubDER,
	}
}

func genEd25519() keyPair {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	return newKeyPair(priv)
}

func genRSA() keyPair {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return newKeyPair(priv)
}

// Keys are generated once per test binary: RSA generation is slow under -race.
var (
	edKeys      = sync.OnceValue(genEd25519)
	otherEdKeys = sync.OnceValue(genEd25519)
	rsaKeys     = sync.OnceValue(genRSA)
	otherRSA    = sync.OnceValue(genRSA)
)

// newTokens returns a Tokens for method (HS256, EdDSA or RS256) with the
// test keys, on the real clock.
func newTokens(tb testing.TB, method string) *auth.Tokens {
	tb.Helper()
	o := auth.TokenOptions{Method: method, Issuer: testIssuer, Audience: testAudience, TTL: testTTL}
	switch method {
	case "HS256":
		o.Secret = testSecret
	case "EdDSA":
		o.PrivateKeyPEM, o.PublicKeyPEM = edKeys().privPEM, edKeys().pubPEM
	case "RS256":
		o.PrivateKeyPEM, o.PublicKeyPEM = rsaKeys().privPEM, rsaKeys().pubPEM
	}
	tok, err := auth.NewTokens(o)
	if err != nil {
		tb.Fatalf("NewTokens(%s): %v", method, err)
	}
	return tok
}

// fixedTokens is newTokens on the clock testNow.
func fixedTokens(tb testing.TB, method string) *auth.Tokens {
	tb.Helper()
	tok := newTokens(tb, method)
	tok.SetNow(func() time.Time { return testNow })
	return tok
}

// claims are valid claims at testNow, changed by edit.
func claims(edit func(c jwt.MapClaims)) jwt.MapClaims {
	c := jwt.MapClaims{
		"sub": "42",
		"iss": testIssuer,
		"aud": []string{testAudience},
		"iat": testNow.Unix(),
		"exp": testNow.Add(5 * time.Minute).Unix(),
		"jti": "jti-1",
		"sid": "family-1",
	}
	if edit != nil {
		edit(c)
	}
	return c
}

// sign signs claims with any method and key, as an attacker could.
func sign(tb testing.TB, m jwt.SigningMethod, key any, c jwt.Claims) string {
	tb.Helper()
	s, err := jwt.NewWithClaims(m, c).SignedString(key)
	if err != nil {
		tb.Fatalf("sign with %s: %v", m.Alg(), err)
	}
	return s
}

// seg encodes a JSON token segment.
func seg(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// withPayload replaces the payload of a signed token, keeping its header
// and signature.
func withPayload(tb testing.TB, token string, c jwt.MapClaims) string {
	tb.Helper()
	parts := strings.Split(token, ".")
	parts[1] = seg(tb, c)
	return strings.Join(parts, ".")
}

// withHeader replaces the header of a signed token.
func withHeader(tb testing.TB, token string, h map[string]any) string {
	tb.Helper()
	parts := strings.Split(token, ".")
	parts[0] = seg(tb, h)
	return strings.Join(parts, ".")
}

// flipLastSigChar changes the last character of the signature to another
// one that decodes (non-strictly) to the same bytes: the unused low bits of
// the final base64 character.
func flipLastSigChar(token string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, token[len(token)-1])
	return token[:len(token)-1] + string(alphabet[last^1])
}

func none(tb testing.TB, c jwt.Claims) string {
	tb.Helper()
	return sign(tb, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, c)
}

func TestIssueAndParse(t *testing.T) {
	for _, method := range []string{"HS256", "EdDSA", "RS256"} {
		t.Run(method, func(t *testing.T) {
			tok := fixedTokens(t, method)
			s, issued, err := tok.Issue("42", "family-1")
			if err != nil {
				t.Fatal(err)
			}
			got, err := tok.Parse(s)
			if err != nil {
				t.Fatalf("Parse(issued token): %v", err)
			}
			if got.Subject != "42" || got.SessionID != "family-1" || got.Issuer != testIssuer ||
				len(got.Audience) != 1 || got.Audience[0] != testAudience {
				t.Errorf("claims = %+v", got)
			}
			if got.ID == "" || got.ID != issued.ID {
				t.Errorf("jti = %q, issued %q", got.ID, issued.ID)
			}
			if !got.IssuedAt.Equal(testNow) || !got.ExpiresAt.Equal(testNow.Add(testTTL)) {
				t.Errorf("iat %v exp %v, want %v and %v", got.IssuedAt, got.ExpiresAt, testNow, testNow.Add(testTTL))
			}
			h, _, _ := strings.Cut(s, ".")
			var header map[string]any
			b, _ := base64.RawURLEncoding.DecodeString(h)
			if err := json.Unmarshal(b, &header); err != nil || header["alg"] != method {
				t.Errorf("header %s: alg = %v, want %s", b, header["alg"], method)
			}
			s2, _, err := tok.Issue("42", "family-1")
			if err != nil {
				t.Fatal(err)
			}
			if c2, err := tok.Parse(s2); err != nil || c2.ID == got.ID {
				t.Errorf("second token: jti %v reused or err %v", c2, err)
			}
		})
	}
}

// A token verified once is remembered, but its claims are still checked
// against the clock on every Parse: it expires as an unremembered one.
func TestParseRemembersOnlyTheSignature(t *testing.T) {
	tok := newTokens(t, "HS256")
	now := testNow
	tok.SetNow(func() time.Time { return now })
	s, _, err := tok.Issue("42", "family-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		at    time.Time
		valid bool
	}{
		{"issued", testNow, true},
		{"again", testNow.Add(time.Minute), true},
		{"within the leeway after exp", testNow.Add(testTTL + auth.Leeway - time.Second), true},
		{"expired", testNow.Add(testTTL + auth.Leeway + time.Second), false},
		{"before it was issued", testNow.Add(-auth.Leeway - time.Second), false},
		{"valid again", testNow, true},
	} {
		now = tc.at
		c, err := tok.Parse(s)
		if (err == nil) != tc.valid {
			t.Errorf("%s: Parse error %v, want valid %v", tc.name, err, tc.valid)
		}
		if err == nil && (c.Subject != "42" || c.SessionID != "family-1") {
			t.Errorf("%s: claims %+v", tc.name, c)
		}
	}
	// What a caller does to the claims it got stays its own.
	now = testNow
	c, _ := tok.Parse(s)
	c.Subject = "43"
	c.ExpiresAt.Time = c.ExpiresAt.Add(24 * time.Hour)
	c.Audience[0] = "elsewhere"
	if c2, err := tok.Parse(s); err != nil || c2.Subject != "42" || c2.Audience[0] != testAudience {
		t.Errorf("a caller's edit reached the remembered claims: %+v, %v", c2, err)
	}
	now = testNow.Add(testTTL + auth.Leeway + time.Second)
	if _, err := tok.Parse(s); !errors.Is(err, jwt.ErrTokenExpired) || !errors.Is(err, jwt.ErrTokenInvalidClaims) {
		t.Errorf("a caller's later exp reached the remembered claims, or the error is not the parser's: %v", err)
	}
	// A token differing in one signature character is not the remembered one.
	other := byte('A')
	if s[len(s)-2] == 'A' {
		other = 'B'
	}
	forged := s[:len(s)-2] + string(other) + s[len(s)-1:]
	if _, err := tok.Parse(forged); err == nil {
		t.Error("a forged signature parsed")
	}
}

func TestNewTokensOptions(t *testing.T) {
	ed, rs := edKeys(), rsaKeys()
	base := auth.TokenOptions{Issuer: testIssuer, Audience: testAudience, TTL: testTTL}
	tests := []struct {
		name    string
		edit    func(o *auth.TokenOptions)
		wantErr bool
	}{
		{"HS256 default method", func(o *auth.TokenOptions) { o.Secret = testSecret }, false},
		{"HS256 secret of 32 bytes", func(o *auth.TokenOptions) { o.Method, o.Secret = "HS256", []byte(strings.Repeat("k", 32)) }, false},
		{"HS256 secret of 31 bytes", func(o *auth.TokenOptions) { o.Method, o.Secret = "HS256", []byte(strings.Repeat("k", 31)) }, true},
		{"HS256 without secret", func(o *auth.TokenOptions) { o.Method = "HS256" }, true},
		{"EdDSA with keys", func(o *auth.TokenOptions) { o.Method, o.PrivateKeyPEM, o.PublicKeyPEM = "EdDSA", ed.privPEM, ed.pubPEM }, false},
		{"EdDSA without keys", func(o *auth.TokenOptions) { o.Method = "EdDSA" }, true},
		{"EdDSA with RSA keys", func(o *auth.TokenOptions) { o.Method, o.PrivateKeyPEM, o.PublicKeyPEM = "EdDSA", rs.privPEM, rs.pubPEM }, true},
		{"EdDSA without public key", func(o *auth.TokenOptions) { o.Method, o.PrivateKeyPEM = "EdDSA", ed.privPEM }, true},
		{"RS256 with keys", func(o *auth.TokenOptions) { o.Method, o.PrivateKeyPEM, o.PublicKeyPEM = "RS256", rs.privPEM, rs.pubPEM }, false},
		{"RS256 with Ed25519 keys", func(o *auth.TokenOptions) { o.Method, o.PrivateKeyPEM, o.PublicKeyPEM = "RS256", ed.privPEM, ed.pubPEM }, true},
		{"RS256 with garbage PEM", func(o *auth.TokenOptions) {
			o.Method, o.PrivateKeyPEM, o.PublicKeyPEM = "RS256", []byte("x"), []byte("y")
		}, true},
		{"method none", func(o *auth.TokenOptions) { o.Method, o.Secret = "none", testSecret }, true},
		{"method HS512", func(o *auth.TokenOptions) { o.Method, o.Secret = "HS512", testSecret }, true},
		{"zero lifetime", func(o *auth.TokenOptions) { o.Secret, o.TTL = testSecret, 0 }, true},
		{"no issuer", func(o *auth.TokenOptions) { o.Secret, o.Issuer = testSecret, "" }, true},
		{"no audience", func(o *auth.TokenOptions) { o.Secret, o.Audience = testSecret, "" }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			tt.edit(&o)
			_, err := auth.NewTokens(o)
			if (err != nil) != tt.wantErr {
				t.Errorf("NewTokens: err = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

// TestParseRejects is the catalogue of attacks on an HS256 server: each
// token must be refused.
func TestParseRejects(t *testing.T) {
	tok := fixedTokens(t, "HS256")
	valid := sign(t, jwt.SigningMethodHS256, testSecret, claims(nil))
	if _, err := tok.Parse(valid); err != nil {
		t.Fatalf("the valid token of the table is refused: %v", err)
	}
	parts := strings.Split(valid, ".")
	del := func(k string) func(jwt.MapClaims) { return func(c jwt.MapClaims) { delete(c, k) } }
	set := func(k string, v any) func(jwt.MapClaims) { return func(c jwt.MapClaims) { c[k] = v } }
	hs := func(c jwt.MapClaims) string { return sign(t, jwt.SigningMethodHS256, testSecret, c) }

	tests := []struct {
		name  string
		token string
	}{
		{"alg none", none(t, claims(nil))},
		{"alg none header on a signed token", withHeader(t, valid, map[string]any{"alg": "none", "typ": "JWT"})},
		{"alg none, signature stripped", seg(t, map[string]any{"alg": "none"}) + "." + parts[1] + "."},
		{"alg NONE", seg(t, map[string]any{"alg": "NONE"}) + "." + parts[1] + "."},
		{"HS256 without signature", parts[0] + "." + parts[1] + "."},
		{"unlisted HS512 with the secret", sign(t, jwt.SigningMethodHS512, testSecret, claims(nil))},
		{"unlisted HS384 with the secret", sign(t, jwt.SigningMethodHS384, testSecret, claims(nil))},
		{"unlisted RS256", sign(t, jwt.SigningMethodRS256, rsaKeys().priv, claims(nil))},
		{"unlisted EdDSA", sign(t, jwt.SigningMethodEdDSA, edKeys().priv, claims(nil))},
		{"another secret", sign(t, jwt.SigningMethodHS256, []byte("another-secret-another-secret-0123"), claims(nil))},
		{"no exp", hs(claims(del("exp")))},
		{"exp not a number", hs(claims(set("exp", "tomorrow")))},
		{"expired beyond the leeway", hs(claims(set("exp", testNow.Add(-auth.Leeway-time.Second).Unix())))},
		{"issued in the future beyond the leeway", hs(claims(set("iat", testNow.Add(auth.Leeway+time.Second).Unix())))},
		{"not valid before, beyond the leeway", hs(claims(set("nbf", testNow.Add(auth.Leeway+time.Second).Unix())))},
		{"wrong iss", hs(claims(set("iss", "evil")))},
		{"no iss", hs(claims(del("iss")))},
		{"wrong aud", hs(claims(set("aud", []string{"other-api"})))},
		{"wrong aud as a string", hs(claims(set("aud", "other-api")))},
		{"no aud", hs(claims(del("aud")))},
		{"no sub", hs(claims(del("sub")))},
		{"empty sub", hs(claims(set("sub", "")))},
		{"no jti", hs(claims(del("jti")))},
		{"tampered payload: sub", withPayload(t, valid, claims(set("sub", "1")))},
		{"tampered payload: exp", withPayload(t, valid, claims(set("exp", testNow.Add(24*time.Hour).Unix())))},
		{"tampered header: kid", withHeader(t, valid, map[string]any{"alg": "HS256", "typ": "JWT", "kid": "x"})},
		{"signature of another token", parts[0] + "." + parts[1] + "." + strings.Split(hs(claims(set("sub", "1"))), ".")[2]},
		{"non-canonical signature encoding", flipLastSigChar(valid)},
		{"newline in the signature", valid[:len(valid)-4] + "\n" + valid[len(valid)-4:]},
		{"padded signature", valid + "="},
		{"trailing space", valid + " "},
		{"empty", ""},
		{"garbage", "not a token"},
		{"two segments", parts[0] + "." + parts[1]},
		{"four segments", valid + ".x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if c, err := tok.Parse(tt.token); err == nil {
				t.Errorf("Parse accepted %q: %+v", tt.token, c)
			}
		})
	}
}

// TestParseLeeway checks the 30 s of clock skew allowed on exp, iat and nbf.
func TestParseLeeway(t *testing.T) {
	tok := fixedTokens(t, "HS256")
	tests := []struct {
		name   string
		claims jwt.MapClaims
		ok     bool
	}{
		{"expired within the leeway", claims(func(c jwt.MapClaims) { c["exp"] = testNow.Add(-auth.Leeway + time.Second).Unix() }), true},
		{"expired just now", claims(func(c jwt.MapClaims) { c["exp"] = testNow.Unix() }), true},
		{"expired beyond the leeway", claims(func(c jwt.MapClaims) { c["exp"] = testNow.Add(-auth.Leeway - time.Second).Unix() }), false},
		{"issued in the future within the leeway", claims(func(c jwt.MapClaims) { c["iat"] = testNow.Add(auth.Leeway - time.Second).Unix() }), true},
		{"issued in the future beyond the leeway", claims(func(c jwt.MapClaims) { c["iat"] = testNow.Add(auth.Leeway + time.Second).Unix() }), false},
		{"aud as a plain string", claims(func(c jwt.MapClaims) { c["aud"] = testAudience }), true},
		{"aud among others", claims(func(c jwt.MapClaims) { c["aud"] = []string{"other", testAudience} }), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tok.Parse(sign(t, jwt.SigningMethodHS256, testSecret, tt.claims))
			if (err == nil) != tt.ok {
				t.Errorf("Parse: err = %v, want accepted %v", err, tt.ok)
			}
		})
	}

	// An issued token ages past its lifetime plus the leeway.
	s, _, err := tok.Issue("42", "f")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		age time.Duration
		ok  bool
	}{
		{testTTL, true},
		{testTTL + auth.Leeway - time.Second, true},
		{testTTL + auth.Leeway + time.Second, false},
	} {
		tok.SetNow(func() time.Time { return testNow.Add(tt.age) })
		if _, err := tok.Parse(s); (err == nil) != tt.ok {
			t.Errorf("token aged %v: err = %v, want accepted %v", tt.age, err, tt.ok)
		}
	}
}

// TestKeyConfusion attacks servers using asymmetric keys: the public key is
// public, so a token "signed" with it as an HMAC secret must never pass.
func TestKeyConfusion(t *testing.T) {
	ed, rs := edKeys(), rsaKeys()
	rawEd := []byte(ed.pub.(ed25519.PublicKey))
	tests := []struct {
		name   string
		server string
		token  func(t *testing.T) string
		ok     bool
	}{
		{"EdDSA valid", "EdDSA", func(t *testing.T) string { return sign(t, jwt.SigningMethodEdDSA, ed.priv, claims(nil)) }, true},
		{"EdDSA: HS256 with the public key PEM", "EdDSA", func(t *testing.T) string { return sign(t, jwt.SigningMethodHS256, ed.pubPEM, claims(nil)) }, false},
		{"EdDSA: HS256 with the public key DER", "EdDSA", func(t *testing.T) string { return sign(t, jwt.SigningMethodHS256, ed.pubDER, claims(nil)) }, false},
		{"EdDSA: HS256 with the raw public key", "EdDSA", func(t *testing.T) string { return sign(t, jwt.SigningMethodHS256, rawEd, claims(nil)) }, false},
		{"EdDSA: alg none", "EdDSA", func(t *testing.T) string { return none(t, claims(nil)) }, false},
		{"EdDSA: another key", "EdDSA", func(t *testing.T) string {
			return sign(t, jwt.SigningMethodEdDSA, otherEdKeys().priv, claims(nil))
		}, false},
		{"EdDSA: unlisted RS256", "EdDSA", func(t *testing.T) string { return sign(t, jwt.SigningMethodRS256, rs.priv, claims(nil)) }, false},
		{"RS256 valid", "RS256", func(t *testing.T) string { return sign(t, jwt.SigningMethodRS256, rs.priv, claims(nil)) }, true},
		{"RS256: HS256 with the public key PEM", "RS256", func(t *testing.T) string { return sign(t, jwt.SigningMethodHS256, rs.pubPEM, claims(nil)) }, false},
		{"RS256: HS256 with the public key DER", "RS256", func(t *testing.T) string { return sign(t, jwt.SigningMethodHS256, rs.pubDER, claims(nil)) }, false},
		{"RS256: alg none", "RS256", func(t *testing.T) string { return none(t, claims(nil)) }, false},
		{"RS256: another key", "RS256", func(t *testing.T) string { return sign(t, jwt.SigningMethodRS256, otherRSA().priv, claims(nil)) }, false},
		{"RS256: unlisted PS256 with the same key", "RS256", func(t *testing.T) string { return sign(t, jwt.SigningMethodPS256, rs.priv, claims(nil)) }, false},
		{"RS256: unlisted RS512 with the same key", "RS256", func(t *testing.T) string { return sign(t, jwt.SigningMethodRS512, rs.priv, claims(nil)) }, false},
		{"RS256: unlisted EdDSA", "RS256", func(t *testing.T) string { return sign(t, jwt.SigningMethodEdDSA, ed.priv, claims(nil)) }, false},
		{"RS256: wrong aud", "RS256", func(t *testing.T) string {
			return sign(t, jwt.SigningMethodRS256, rs.priv, claims(func(c jwt.MapClaims) { c["aud"] = "x" }))
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := fixedTokens(t, tt.server)
			token := tt.token(t)
			_, err := tok.Parse(token)
			if (err == nil) != tt.ok {
				t.Errorf("Parse: err = %v, want accepted %v", err, tt.ok)
			}
		})
	}
}

// TestKeyFileModes checks that each server accepts only its own tokens.
func TestKeyFileModes(t *testing.T) {
	methods := []string{"HS256", "EdDSA", "RS256"}
	servers := map[string]*auth.Tokens{}
	tokens := map[string]string{}
	for _, m := range methods {
		servers[m] = newTokens(t, m)
		s, _, err := servers[m].Issue("7", "f")
		if err != nil {
			t.Fatalf("%s: Issue: %v", m, err)
		}
		tokens[m] = s
	}
	for _, issuer := range methods {
		for _, verifier := range methods {
			t.Run(issuer+" token to "+verifier+" server", func(t *testing.T) {
				_, err := servers[verifier].Parse(tokens[issuer])
				if ok := err == nil; ok != (issuer == verifier) {
					t.Errorf("accepted = %v (err %v), want %v", ok, err, issuer == verifier)
				}
			})
		}
	}
}
