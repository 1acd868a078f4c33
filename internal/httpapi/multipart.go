package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/clientaddr"
	"github.com/socialgw/gateway/internal/gqlerr"
	"github.com/socialgw/gateway/internal/social"
)

// Uploads bound the multipart requests that carry files with a mutation
// (the GraphQL multipart request spec); zero values take the defaults.
type Uploads struct {
	// MaxFileBytes bounds one file (10 MiB), MaxFiles the files of a
	// request (4), MaxRequestBytes the whole body (41 MiB).
	MaxFileBytes, MaxRequestBytes int64
	MaxFiles                      int
	// TempDir holds files while their request runs (os.TempDir).
	TempDir string
}

// WithDefaults fills in the zero bounds.
func (u Uploads) WithDefaults() Uploads {
	if u.MaxFileBytes <= 0 {
		u.MaxFileBytes = 10 << 20
	}
	if u.MaxFiles <= 0 {
		u.MaxFiles = 4
	}
	if u.MaxRequestBytes <= 0 {
		u.MaxRequestBytes = int64(u.MaxFiles)*u.MaxFileBytes + 1<<20
	}
	return u
}

// uploadCheck is what readMultipart needs: the bounds, and the
// authenticator that checks a request's token before any file is read.
type uploadCheck struct {
	Uploads
	authn auth.Authenticator
}

// multipartBody is a multipart request read: its operations part and its
// files, each spooled to a temporary file.
type multipartBody struct {
	operations []byte
	// paths maps each file part's name to the variables it fills.
	paths map[string][]string
	files map[string]graphql.Upload
}

// preflightHeaders are the headers that make a browser ask before it
// sends a request cross-site (a CORS preflight): with one of them present
// and non-empty, a multipart request, which is otherwise a "simple" one
// any site may send, is known to come from a client the CORS policy let
// through.
// defaultMaxOperations bounds a multipart request's operations part when
// no body bound is set.
const defaultMaxOperations = 1 << 20

var preflightHeaders = []string{"GraphQL-Require-Preflight", "Apollo-Require-Preflight"}

// multipartParams reads a multipart request (readMultipart) and decodes
// its operations part as a JSON body, with the files put where its map
// says. The files it spooled come back even with a refusal, to be
// removed. The operations and map parts are held in memory while the
// files after them are read, so they are reserved in bodies as a JSON
// body is, as their bytes arrive: slow uploads cannot add up past the
// budget either, nor one address's past its share.
func multipartParams(w http.ResponseWriter, r *http.Request, maxOps int64, bodies *bodyBudget, check uploadCheck) (*requestParams, *refusal) {
	if maxOps <= 0 {
		maxOps = defaultMaxOperations
	}
	hold := bodies.hold(clientaddr.From(r.Context()))
	defer hold.release()
	upload, f := readMultipart(w, r, maxOps, hold, check)
	spooled := &requestParams{upload: upload}
	if f != nil {
		return spooled, f
	}
	params, f := paramsOf(upload.operations)
	if f != nil {
		return spooled, f
	}
	if err := upload.attach(params.Variables); err != nil {
		return spooled, refuse(http.StatusBadRequest, err.Error())
	}
	p := newParams(params)
	p.upload = upload
	return p, nil
}

// readMultipart reads a multipart request as the GraphQL multipart request
// spec lays it out: operations (at most maxOps bytes, checked afterwards
// like a JSON body), map, then the files, streamed to temporary files as
// they arrive, each bounded, as are their count and the whole body. Only
// a signed-in user may upload: a request without a valid token is refused
// before its files are read (authenticate checks it again afterwards, as
// for every request: one more Redis round trip, for uploads only).
func readMultipart(w http.ResponseWriter, r *http.Request, maxOps int64, hold *bodyHold, check uploadCheck) (*multipartBody, *refusal) {
	u := check.WithDefaults()
	if f := checkUploader(r, check.authn); f != nil {
		return nil, f
	}
	if r.ContentLength > u.MaxRequestBytes {
		return nil, refuse(http.StatusRequestEntityTooLarge, fmt.Sprintf("request body too large (at most %d bytes with files)", u.MaxRequestBytes))
	}
	r.Body = http.MaxBytesReader(w, r.Body, u.MaxRequestBytes)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "the multipart body does not parse: "+err.Error())
	}
	b := &multipartBody{files: map[string]graphql.Upload{}}
	readErr := func(err error) *refusal {
		return bodyRefusal(err, "multipart body", u.MaxRequestBytes)
	}
	small := func(name string, limit int64) ([]byte, *refusal) {
		part, err := mr.NextPart()
		if err != nil {
			return nil, readErr(err)
		}
		defer part.Close()
		if part.FormName() != name {
			return nil, refuse(http.StatusBadRequest, fmt.Sprintf("the multipart body's parts must start with operations, then map; found %q", part.FormName()))
		}
		data, err := readBody(part, -1, limit, hold)
		if errors.Is(err, errBodyLarger) {
			return nil, refuse(http.StatusRequestEntityTooLarge, name+" part too large")
		}
		if err != nil {
			return nil, readErr(err)
		}
		return data, nil
	}
	var refusal *refusal
	if b.operations, refusal = small("operations", maxOps); refusal != nil {
		return b, refusal
	}
	m, refusal := small("map", 64<<10)
	if refusal != nil {
		return b, refusal
	}
	if dup := repeatedName(m); dup != "" {
		return b, refuse(http.StatusBadRequest, "the map part: "+dup.Error())
	}
	if err := json.Unmarshal(m, &b.paths); err != nil {
		return b, refuse(http.StatusBadRequest, "the map part must be a JSON object of arrays of paths")
	}
	if len(b.paths) > u.MaxFiles {
		return b, refuse(http.StatusBadRequest, fmt.Sprintf("a request carries at most %d files", u.MaxFiles))
	}
	if refusal := b.readFiles(mr, u, readErr); refusal != nil {
		return b, refusal
	}
	for name := range b.paths {
		if _, ok := b.files[name]; !ok {
			return b, refuse(http.StatusBadRequest, fmt.Sprintf("the map names the file %q, which the body does not carry", name))
		}
	}
	return b, nil
}

// readFiles spools the file parts that follow the map, each one the map
// names, once.
func (b *multipartBody) readFiles(mr *multipart.Reader, u Uploads, readErr func(error) *refusal) *refusal {
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return readErr(err)
		}
		name := part.FormName()
		if _, ok := b.paths[name]; !ok {
			part.Close()
			return refuse(http.StatusBadRequest, fmt.Sprintf("the file part %q is not in the map", name))
		}
		if _, dup := b.files[name]; dup {
			part.Close()
			return refuse(http.StatusBadRequest, fmt.Sprintf("the file part %q is sent twice", name))
		}
		up, refusal := spool(part, u, readErr)
		part.Close()
		if up.File != nil {
			b.files[name] = up
		}
		if refusal != nil {
			return refusal
		}
	}
	return nil
}

// checkUploader refuses a multipart request without the header that
// forces a CORS preflight, or without a valid token, before any of its
// body is read.
func checkUploader(r *http.Request, authn auth.Authenticator) *refusal {
	preflight := false
	for _, h := range preflightHeaders {
		preflight = preflight || strings.TrimSpace(r.Header.Get(h)) != ""
	}
	if !preflight {
		return refuse(http.StatusBadRequest,
			"a multipart/form-data request needs a non-empty GraphQL-Require-Preflight (or Apollo-Require-Preflight) header, "+
				"so that browsers check it with a CORS preflight")
	}
	if r.Header.Get("Authorization") == "" {
		return &refusal{status: http.StatusUnauthorized, code: social.Unauthenticated, msg: "uploading files needs a signed-in user"}
	}
	if authn != nil {
		if _, err := auth.ViewerFromHeader(r.Context(), authn, r.Header.Get("Authorization")); err != nil {
			if social.ErrorCode(err) == social.Internal {
				gqlerr.Present(r.Context(), err) // logs it
				return &refusal{status: http.StatusServiceUnavailable, code: social.Internal,
					msg: "could not check the token: retry shortly", header: map[string]string{"Retry-After": "1"}}
			}
			return (&refusal{status: http.StatusUnauthorized, code: social.Unauthenticated, msg: social.ErrorMessage(err)}).
				with("WWW-Authenticate", `Bearer error="invalid_token"`)
		}
	}
	return nil
}

// spool writes one file part to a temporary file, at most u.MaxFileBytes.
func spool(part io.Reader, u Uploads, readErr func(error) *refusal) (graphql.Upload, *refusal) {
	f, err := os.CreateTemp(u.TempDir, "upload-*")
	if err != nil {
		return graphql.Upload{}, &refusal{status: http.StatusServiceUnavailable, code: social.Internal,
			msg: "could not take the upload: retry shortly", header: map[string]string{"Retry-After": "1"}}
	}
	up := graphql.Upload{File: f}
	if fp, ok := part.(interface{ FileName() string }); ok {
		up.Filename = fp.FileName()
	}
	n, err := io.Copy(f, io.LimitReader(part, u.MaxFileBytes+1))
	up.Size = n
	if err != nil {
		return up, readErr(err)
	}
	if n > u.MaxFileBytes {
		return up, refuse(http.StatusRequestEntityTooLarge, fmt.Sprintf("a file is larger than %d bytes", u.MaxFileBytes))
	}
	return up, nil
}

// remove deletes the request's temporary files.
func (b *multipartBody) remove() {
	if b == nil {
		return
	}
	for _, up := range b.files {
		if f, ok := up.File.(*os.File); ok {
			f.Close()
			os.Remove(f.Name())
		}
	}
}

// attach puts each file where the map says, in the decoded variables:
// paths are "variables.…" with dots between object members and array
// indices (the spec's object-path notation).
func (b *multipartBody) attach(vars map[string]any) error {
	for name, paths := range b.paths {
		for _, path := range paths {
			if err := setPath(vars, path, b.files[name]); err != nil {
				return fmt.Errorf("the map's path %q: %w", path, err)
			}
		}
	}
	return nil
}

func setPath(vars map[string]any, path string, v graphql.Upload) error {
	segs := strings.Split(path, ".")
	if len(segs) < 2 || segs[0] != "variables" {
		return errors.New("must start with variables. (one operation per request)")
	}
	var cur any = vars
	for i, seg := range segs[1:] {
		last := i == len(segs)-2
		switch c := cur.(type) {
		case map[string]any:
			if last {
				if _, ok := c[seg]; !ok || c[seg] != nil {
					return errors.New("must name a null in the variables")
				}
				c[seg] = v
				return nil
			}
			cur = c[seg]
		case []any:
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || n >= len(c) {
				return errors.New("names no element of the variables")
			}
			if last {
				if c[n] != nil {
					return errors.New("must name a null in the variables")
				}
				c[n] = v
				return nil
			}
			cur = c[n]
		default:
			return errors.New("names nothing in the variables")
		}
	}
	return errors.New("names nothing in the variables")
}
