package app_test

import (
	"testing"
	"time"

	"github.com/socialgw/gateway/cmd/internal/app"
)

// PUBLIC_URL is an http(s) address of a host, nothing more: the e-mails'
// links are built on it.
func TestMailPublicURL(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"", true},
		{"https://social.example", true},
		{"http://localhost:8080/", true},
		{"https://social.example/base", true},
		{"social.example", false},
		{"ftp://social.example", false},
		{"https://user:pw@social.example", false},
		{"https://social.example/?x=1", false},
		{"https://social.example/#frag", false},
		{"https://", false},
	} {
		err := (&app.Mail{ResetTTL: time.Minute, PublicURL: tc.url}).Check()
		if (err == nil) != tc.ok {
			t.Errorf("PUBLIC_URL %q: %v, want ok %v", tc.url, err, tc.ok)
		}
	}
}
