package media_test

import (
	"bytes"
	"testing"

	"github.com/socialgw/gateway/internal/media"
	"github.com/socialgw/gateway/internal/media/mediatest"
)

// FuzzClean feeds damaged variants of the corpus to Inspect and Clean:
// neither may panic or hang, and a file Clean accepts must inspect again
// as the same file. (go test -fuzz FuzzClean ./internal/media)
func FuzzClean(f *testing.F) {
	for _, b := range [][]byte{
		mediatest.JPEGMPF(f, 16, 8), mediatest.PNGWithPrivate(f, 5, 7), mediatest.WebPWithMetadata(3, 2),
		mediatest.WebPAnimated(8, 4), mediatest.GIFWithComments(f, 6, 5),
		mediatest.OggOpusTagged(312, 2*48000+312, 100), mediatest.M4AWithMetadata(1000, 3500, false, false),
		mediatest.MP3(3, true), mediatest.ADTS(3),
	} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := media.Inspect(bytes.NewReader(b), int64(len(b)), 1<<20)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if _, err := media.Clean(&out, bytes.NewReader(b), int64(len(b)), got, 1<<20); err != nil {
			return
		}
		again, err := media.Inspect(bytes.NewReader(out.Bytes()), int64(out.Len()), 1<<20)
		if err != nil || again.MIME != got.MIME || again.Width != got.Width || again.Height != got.Height {
			t.Errorf("stored copy inspects as %+v, %v; sent %+v", again, err, got)
		}
	})
}
