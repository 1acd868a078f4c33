package httpapi

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/socialgw/gateway/internal/gqlerr"
	"github.com/socialgw/gateway/internal/social"
)

// ExportPath is where the gateway serves data export archives:
// /exports/{user}/{export}.zip?exp=…&sig=….
const ExportPath = "/exports/"

// DefaultExportURLTTL is how long an archive's address holds.
const DefaultExportURLTTL = time.Hour

// ExportAddresses makes and checks the addresses of data export archives.
// An address is a capability: it names the account and the export, and
// carries an expiry and an HMAC-SHA256 over the path and the expiry with
// the server key, so whoever holds it may fetch the archive until it
// expires, and no one can make or change one.
type ExportAddresses struct {
	// Key signs the addresses (the gateways' shared server key).
	Key []byte
	// TTL is how long an address holds (DefaultExportURLTTL when 0); never
	// past the archive's own end.
	TTL time.Duration
	// Base is put before the path of every address.
	Base string
	// Now is the clock of expiries (time.Now when nil).
	Now func() time.Time
}

func (a *ExportAddresses) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// URL is the signed address of a READY export's archive, "" for any
// other.
func (a *ExportAddresses) URL(e *social.DataExport) string {
	if e == nil || e.Status != social.ExportReady {
		return ""
	}
	ttl := a.TTL
	if ttl <= 0 {
		ttl = DefaultExportURLTTL
	}
	exp := a.now().Add(ttl).Truncate(time.Minute).Add(time.Minute)
	if e.Until.Before(exp) {
		exp = e.Until
	}
	p := ExportPath + e.UserID + "/" + e.ID + ".zip"
	q := url.Values{"exp": {strconv.FormatInt(exp.Unix(), 10)}, "sig": {a.sign(p, exp.Unix())}}
	return a.Base + p + "?" + q.Encode()
}

func (a *ExportAddresses) sign(path string, exp int64) string {
	h := hmac.New(sha256.New, a.Key)
	fmt.Fprintf(h, "export\x00%s\x00%d", path, exp)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// check reads a request's address: the account and export it names,
// when its signature holds and it has not expired.
func (a *ExportAddresses) check(r *http.Request) (userID, exportID string, ok bool) {
	rest, found := strings.CutPrefix(r.URL.Path, ExportPath)
	userID, file, _ := strings.Cut(rest, "/")
	exportID, zip := strings.CutSuffix(file, ".zip")
	if !found || !zip || !social.IsID(userID) || exportID == "" {
		return "", "", false
	}
	q := r.URL.Query()
	exp, err := strconv.ParseInt(q.Get("exp"), 10, 64)
	if err != nil || !hmac.Equal([]byte(a.sign(r.URL.Path, exp)), []byte(q.Get("sig"))) || a.now().Unix() >= exp {
		return "", "", false
	}
	return userID, exportID, true
}

// ExportRecords reads accounts' latest exports (redisstore.ExportService).
type ExportRecords interface {
	LatestExport(ctx context.Context, userID string) (*social.DataExport, error)
}

// ExportFiles opens accounts' archives (mediastore.Store).
type ExportFiles interface {
	OpenExport(ctx context.Context, userID string) (io.ReadSeekCloser, error)
}

// Handler serves GET and HEAD /exports/…: the archive of an address that
// holds (signature, expiry) while the export it names is still the
// account's latest and READY. Every refusal is 403 with no content, so an
// address reveals nothing of an account or an export.
func (a *ExportAddresses) Handler(files ExportFiles, records ExportRecords) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "private, no-store")
		h.Set("Referrer-Policy", "no-referrer")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		userID, exportID, ok := a.check(r)
		if !ok || files == nil {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		e, err := records.LatestExport(r.Context(), userID)
		if err != nil {
			gqlerr.Present(r.Context(), err) // logs it
			h.Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if e == nil || e.ID != exportID || e.Status != social.ExportReady {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		f, err := files.OpenExport(r.Context(), userID)
		if social.IsCode(err, social.NotFound) {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		if err != nil {
			gqlerr.Present(r.Context(), err)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		defer f.Close()
		h.Set("Content-Type", "application/zip")
		h.Set("Content-Disposition", `attachment; filename="export-`+exportID+`.zip"`)
		h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
		http.ServeContent(w, r, "", time.Time{}, f)
	})
}
