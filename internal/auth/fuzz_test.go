package auth_test

import (
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// FuzzParse: no input makes Parse panic, and the only strings it accepts
// are tokens exactly as Issue writes them: the canonical encoding of claims
// signed with the server's secret (no alternative spelling of a signature,
// no forged or altered token). The check re-signs the accepted claims
// instead of remembering issued tokens, because fuzzing workers are
// separate processes that each issue their own.
//
//	go test -run '^$' -fuzz=FuzzParse -fuzztime=20s ./internal/auth/
func FuzzParse(f *testing.F) {
	tok := newTokens(f, "HS256")
	valid, _, err := tok.Issue("42", "family-1")
	if err != nil {
		f.Fatal(err)
	}

	// Attack seeds carry claims that are valid now, so only the signature
	// or the encoding stands between them and acceptance.
	now := time.Now()
	live := func(edit func(jwt.MapClaims)) jwt.MapClaims {
		return claims(func(c jwt.MapClaims) {
			c["iat"], c["exp"] = now.Unix(), now.Add(time.Hour).Unix()
			if edit != nil {
				edit(c)
			}
		})
	}
	parts := strings.Split(valid, ".")
	for _, s := range []string{
		valid,
		tamperSignature(valid),
		flipLastSigChar(valid),
		withPayload(f, valid, live(func(c jwt.MapClaims) { c["sub"] = "1" })),
		parts[0] + "." + parts[1] + ".",
		none(f, live(nil)),
		sign(f, jwt.SigningMethodHS512, testSecret, live(nil)),
		sign(f, jwt.SigningMethodHS256, []byte("another-secret-another-secret-0123"), live(nil)),
		"",
		"..",
		"a.b.c",
		"eyJhbGciOiJub25lIn0.e30.",
		"not a token",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := tok.Parse(s)
		if err != nil {
			if c != nil {
				t.Errorf("Parse returned claims with an error: %+v, %v", c, err)
			}
			return
		}
		reissued, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(testSecret)
		if err != nil {
			t.Fatal(err)
		}
		if s != reissued {
			t.Fatalf("Parse accepted %q, which Issue would have written as %q", s, reissued)
		}
		if c.Subject != "42" || c.SessionID != "family-1" {
			t.Fatalf("Parse accepted claims that were never issued: %+v", c)
		}
	})
}
