package auth_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/social"
)

// phcRE is the PHC string of an argon2id hash with OWASP's parameters, a
// 16-byte salt and a 32-byte key (unpadded standard base64).
var phcRE = regexp.MustCompile(`^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`)

func TestHashFormat(t *testing.T) {
	p := auth.NewPasswords(2)
	a, err := p.Hash("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Hash("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{a, b} {
		if !phcRE.MatchString(h) {
			t.Errorf("hash %q is not an argon2id PHC string with m=19456,t=2,p=1", h)
		}
	}
	if a == b {
		t.Errorf("two hashes of one password are equal (%q): the salt is not random", a)
	}
}

func TestVerify(t *testing.T) {
	p := auth.NewPasswords(2)
	const pw = "correct horse"
	h, err := p.Hash(pw)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, password string
		want           bool
	}{
		{"same password", pw, true},
		{"wrong password", "correct horsf", false},
		{"different case", "Correct horse", false},
		{"prefix", "correct hors", false},
		{"extra byte", pw + " ", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Verify(tt.password, h); got != tt.want {
				t.Errorf("Verify(%q) = %v, want %v", tt.password, got, tt.want)
			}
		})
	}
}

// TestVerifyMalformed feeds broken PHC strings: each is refused without
// running a derivation (so a corrupt hash can neither match nor make the
// server derive with absurd parameters).
func TestVerifyMalformed(t *testing.T) {
	p := auth.NewPasswords(1)
	const pw = "correct horse"
	valid, err := p.Hash(pw)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(valid, "$") // "", argon2id, v=19, m=...,t=...,p=..., salt, key
	with := func(i int, v string) string {
		q := append([]string(nil), parts...)
		q[i] = v
		return strings.Join(q, "$")
	}
	tests := []struct {
		name, phc string
	}{
		{"empty", ""},
		{"plain text", pw},
		{"argon2i", with(1, "argon2i")},
		{"argon2d", with(1, "argon2d")},
		{"bcrypt", "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"},
		{"version 16", with(2, "v=16")},
		{"no version", with(2, "")},
		{"version with junk", with(2, "v=19x")},
		{"params reordered", with(3, "t=2,m=19456,p=1")},
		{"params with junk", with(3, "m=19456,t=2,p=1,x=1")},
		{"zero memory", with(3, "m=0,t=2,p=1")},
		{"zero time", with(3, "m=19456,t=0,p=1")},
		{"zero threads", with(3, "m=19456,t=2,p=0")},
		{"negative memory", with(3, "m=-1,t=2,p=1")},
		{"memory over 1 GiB", with(3, "m=2000000,t=2,p=1")},
		{"threads overflow", with(3, "m=19456,t=2,p=256")},
		{"salt not base64", with(4, "!!!!")},
		{"salt padded", with(4, parts[4]+"==")},
		{"empty salt", with(4, "")},
		{"short salt", with(4, "AAAAAA")},
		{"key not base64", with(5, "****")},
		{"empty key", with(5, "")},
		{"short key", with(5, "AAAA")},
		{"missing key", strings.Join(parts[:5], "$")},
		{"extra part", valid + "$x"},
		{"leading junk", "x" + valid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := p.Derivations()
			if p.Verify(pw, tt.phc) {
				t.Errorf("Verify accepted %q", tt.phc)
			}
			if n := p.Derivations() - before; n != 0 {
				t.Errorf("Verify(%q) ran %d derivations, want 0", tt.phc, n)
			}
		})
	}
}

// TestVerifyComparesInConstantTime checks the source: the derived key is
// compared with crypto/subtle, never with bytes.Equal or a loop that stops
// at the first difference. (A timing measurement would be flaky.)
func TestVerifyComparesInConstantTime(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "password.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		if imp.Path.Value == `"bytes"` {
			t.Errorf("password.go imports bytes: compare keys with crypto/subtle only")
		}
	}
	var verify *ast.FuncDecl
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == "Verify" {
			verify = fd
		}
	}
	if verify == nil {
		t.Fatal("no Verify in password.go")
	}
	found := false
	ast.Inspect(verify.Body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "subtle" && sel.Sel.Name == "ConstantTimeCompare" {
				found = true
			}
		}
		return true
	})
	if !found {
		t.Error("Verify does not call subtle.ConstantTimeCompare")
	}
}

func TestValidatePassword(t *testing.T) {
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"8 bytes", "12345678", true},
		{"128 bytes", strings.Repeat("p", 128), true},
		{"7 bytes", "1234567", false},
		{"129 bytes", strings.Repeat("p", 129), false},
		{"empty", "", false},
		{"4 runes in 8 bytes", "éééé", true},
		{"65 runes in 129 bytes", strings.Repeat("é", 64) + "p", false},
		{"64 runes in 128 bytes", strings.Repeat("é", 64), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkValid(t, auth.ValidatePassword(tt.in), tt.ok)
		})
	}
}

// checkValid checks a validator's answer: nil, or BAD_USER_INPUT.
func checkValid(t *testing.T, err error, ok bool) {
	t.Helper()
	if ok && err != nil {
		t.Errorf("refused: %v", err)
	}
	if !ok && !social.IsCode(err, social.BadUserInput) {
		t.Errorf("err = %v, want BAD_USER_INPUT", err)
	}
}
