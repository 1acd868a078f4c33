// Package media checks uploaded files before they are stored: it sniffs
// what a file is from its bytes (never from what the client says), reads
// an image's dimensions or an audio file's duration, refuses anything
// else and images too large to decode safely, and writes the copy that is
// kept: only the parts of the file its decoder needs, without the
// metadata that can locate or identify a person, an image decoded whole
// from the very bytes written. It reads files through io.ReaderAt, so an
// upload spooled to a temporary file is never held whole in memory (a
// JPEG segment, an M4A movie header, a WebP or GIF frame's data are, one
// at a time); the decoded pixels are, within the pixel limit.
package media

import (
	"errors"
	"fmt"
	"io"

	"github.com/socialgw/gateway/internal/social"
)

// DefaultMaxPixels is the largest image accepted, in pixels: a small
// compressed file can claim a canvas that takes gigabytes to decode
// (a decompression bomb), so the header's claim is checked first.
const DefaultMaxPixels = 50_000_000

// File is what Inspect learnt of a file.
type File struct {
	Kind social.MediaKind
	// MIME is sniffed from the content.
	MIME string
	// Width and Height are an image's, in pixels.
	Width, Height int
	// Duration is an audio file's, in seconds.
	Duration float64
}

// Inspect sniffs a file of size bytes and checks it: an image (JPEG, PNG,
// WebP, GIF) whose header decodes and whose pixel count is at most
// maxPixels (Clean decodes the rest), or audio (MP3, Ogg/Opus, M4A, ADTS AAC) whose duration can
// be read. Anything else is a BAD_USER_INPUT *social.Error.
func Inspect(r io.ReaderAt, size int64, maxPixels int64) (File, error) {
	head := make([]byte, 64)
	n, err := r.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return File{}, fmt.Errorf("read file: %w", err)
	}
	head = head[:n]
	mime := sniff(head)
	switch mime {
	case "":
		return File{}, refuse("is not an image (JPEG, PNG, WebP, GIF) or audio (MP3, Ogg/Opus, M4A, AAC) file")
	case mimeJPEG, mimePNG, mimeGIF, mimeWebP:
		return inspectImage(r, size, mime, maxPixels)
	}
	d, err := duration(r, size, mime)
	if err != nil {
		return File{}, err
	}
	return File{Kind: social.Audio, MIME: mime, Duration: d}, nil
}

// Sniffed media types.
const (
	mimeJPEG = "image/jpeg"
	mimePNG  = "image/png"
	mimeGIF  = "image/gif"
	mimeWebP = "image/webp"
	mimeMP3  = "audio/mpeg"
	mimeOgg  = "audio/ogg"
	mimeM4A  = "audio/mp4"
	mimeAAC  = "audio/aac"
)

// sniff names a file's type from its first bytes, or "".
func sniff(b []byte) string {
	has := func(off int, sig string) bool { return len(b) >= off+len(sig) && string(b[off:off+len(sig)]) == sig }
	switch {
	case has(0, "\xff\xd8\xff"):
		return mimeJPEG
	case has(0, "\x89PNG\r\n\x1a\n"):
		return mimePNG
	case has(0, "GIF87a"), has(0, "GIF89a"):
		return mimeGIF
	case has(0, "RIFF") && has(8, "WEBP"):
		return mimeWebP
	case has(0, "OggS"):
		return mimeOgg
	case has(4, "ftyp"):
		return mimeM4A
	case has(0, "ID3"):
		return mimeMP3
	case len(b) >= 2 && b[0] == 0xff && b[1]&0xf6 == 0xf0:
		return mimeAAC // ADTS: 12 sync bits, layer 00
	case len(b) >= 2 && b[0] == 0xff && b[1]&0xe0 == 0xe0 && b[1]&0x06 != 0:
		return mimeMP3 // MPEG audio frame: 11 sync bits, a layer
	}
	return ""
}

// refuse is the error of a file the client sent that is not accepted.
func refuse(why string) error {
	return social.Errorf(social.BadUserInput, "the file %s", why)
}
