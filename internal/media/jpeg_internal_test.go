package media

import (
	"bufio"
	"bytes"
	"testing"
)

// TestCopyScan copies entropy-coded data through read buffers of every
// small size, so that a 0xff falls at the end of a buffer: the bytes
// before it must be written before the next read refills it.
func TestCopyScan(t *testing.T) {
	var scan []byte
	for i := range 600 {
		b := byte(i * 37)
		scan = append(scan, b)
		switch {
		case b == 0xff:
			scan = append(scan, 0) // stuffed
		case i%50 == 0:
			scan = append(scan, 0xff, 0xd0+byte(i/50%8)) // a restart marker
		}
	}
	in := append(append([]byte{}, scan...), 0xff, 0xff, 0xd9) // a fill byte, EOI
	for size := 16; size < 64; size++ {
		var out bytes.Buffer
		m, err := copyScan(&out, bufio.NewReaderSize(bytes.NewReader(in), size))
		if err != nil || m != jpegEOI || !bytes.Equal(out.Bytes(), scan) {
			t.Fatalf("buffer of %d: marker %#x, %v; copied the scan: %v", size, m, err, bytes.Equal(out.Bytes(), scan))
		}
	}
}
