package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// bodyPace is the least rate at which a request body must arrive
// (Options.MinBodyRate): each window must bring rate × window bytes, or
// the rest of the body. A slower body is cut, so that a client sending a
// byte now and then holds a connection, a goroutine and its buffer for
// one window, not for the server's whole read timeout.
type bodyPace struct {
	rate   int64 // bytes a second; 0: no minimum
	window time.Duration
}

// defaultPaceWindow is the window of the minimum rate.
const defaultPaceWindow = 5 * time.Second

// tooSlow is the error of a body cut for its rate: its message is the
// client's answer.
type tooSlow struct {
	rate   int64
	window time.Duration
}

func (e tooSlow) Error() string {
	return fmt.Sprintf("the request body arrived slower than the least rate, %d bytes a second over each %s, and was cut", e.rate, e.window)
}

// pacedBody is a request body read at bodyPace: the connection's read
// deadline, set through http.ResponseController, is the end of the
// current window, and moves one window on each time the window's bytes
// have come. It never goes past the server's own ReadTimeout, counted
// from the first read.
type pacedBody struct {
	io.ReadCloser
	pace bodyPace
	rc   *http.ResponseController
	srv  *http.Server

	started   bool
	end       time.Time // the server's ReadTimeout; zero: none
	got, owed int64     // bytes come and owed in the window
}

// paceBody puts r's body under p. Where the connection cannot take a
// deadline (a recorded request in tests), the body is left as it is.
func paceBody(w http.ResponseWriter, r *http.Request, p bodyPace) *pacedBody {
	if p.rate <= 0 {
		return nil
	}
	if p.window <= 0 {
		p.window = defaultPaceWindow
	}
	srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server)
	b := &pacedBody{ReadCloser: r.Body, pace: p, rc: http.NewResponseController(w), srv: srv}
	r.Body = b
	return b
}

func (b *pacedBody) Read(p []byte) (int, error) {
	if !b.started {
		b.started = true
		if b.srv != nil && b.srv.ReadTimeout > 0 {
			b.end = time.Now().Add(b.srv.ReadTimeout)
		}
		if !b.nextWindow() {
			b.pace.rate = 0 // no deadline here: read as it comes
		}
	}
	n, err := b.ReadCloser.Read(p)
	if b.pace.rate > 0 {
		if b.got += int64(n); b.got >= b.owed {
			b.nextWindow()
		}
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return n, tooSlow{rate: b.pace.rate, window: b.pace.window}
	}
	return n, err
}

// nextWindow opens a window: its bytes owed, and its end as the read
// deadline; false when the connection takes no deadline.
func (b *pacedBody) nextWindow() bool {
	b.got, b.owed = 0, b.pace.rate*int64(b.pace.window)/int64(time.Second)
	deadline := time.Now().Add(b.pace.window)
	if !b.end.IsZero() && b.end.Before(deadline) {
		deadline = b.end
	}
	return b.rc.SetReadDeadline(deadline) == nil
}

// done gives the connection back the server's deadline once the body has
// been read: the handler runs on under its own deadline, and a read
// deadline passing while it runs would end its request's context.
func (b *pacedBody) done() {
	if b == nil || !b.started || b.pace.rate <= 0 {
		return
	}
	_ = b.rc.SetReadDeadline(b.end)
}
