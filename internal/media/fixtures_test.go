package media_test

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/socialgw/gateway/internal/media"
	"github.com/socialgw/gateway/internal/media/mediatest"
)

var update = flag.Bool("update", false, "rewrite testdata's audio fixtures from mediatest")

// TestAudioFixtures reads the minimal audio files kept under testdata (made
// by mediatest; -update writes them again), so the parsers are also
// checked against bytes on disk that any other tool can open.
func TestAudioFixtures(t *testing.T) {
	tests := []struct {
		file     string
		build    []byte
		mime     string
		duration float64
	}{
		{"cbr.mp3", mediatest.MP3(10, true), "audio/mpeg", 10 * 1152 / 44100.0},
		{"vbr-xing.mp3", mediatest.MP3Xing(250), "audio/mpeg", 250 * 1152 / 44100.0},
		{"two-seconds.opus", mediatest.OggOpus(312, 2*48000+312), "audio/ogg", 2},
		{"three-and-a-half-seconds.m4a", mediatest.M4A(1000, 3500, "soun"), "audio/mp4", 3.5},
		{"adts.aac", mediatest.ADTS(43), "audio/aac", 43 * 1024 / 44100.0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			if *update {
				if err := os.WriteFile(path, tt.build, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -run TestAudioFixtures -update writes it)", err)
			}
			got, err := media.Inspect(bytes.NewReader(b), int64(len(b)), media.DefaultMaxPixels)
			if err != nil || got.MIME != tt.mime || math.Abs(got.Duration-tt.duration) > 1e-9 {
				t.Errorf("Inspect = %+v, %v; want %s of %v s", got, err, tt.mime, tt.duration)
			}
		})
	}
}
