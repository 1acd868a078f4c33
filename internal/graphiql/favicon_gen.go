//go:build ignore

// favicon_gen.go draws static/favicon.svg's shapes into a 32x32 PNG
// inside an ICO container.
package main

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
)

func segDist(px, py, ax, ay, bx, by float64) float64 {
	dx, dy := bx-ax, by-ay
	t := ((px-ax)*dx + (py-ay)*dy) / (dx*dx + dy*dy)
	t = math.Max(0, math.Min(1, t))
	return math.Hypot(px-(ax+t*dx), py-(ay+t*dy))
}

func main() {
	const n = 32
	img := image.NewNRGBA(image.Rect(0, 0, n, n))
	blue := color.NRGBA{0x1d, 0x4e, 0xd8, 0xff}
	pts := [][2]float64{{16, 9}, {9, 22}, {23, 22}}
	const ss = 4 // supersampling
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			var bg, fg float64
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					px, py := float64(x)+(float64(sx)+0.5)/ss, float64(y)+(float64(sy)+0.5)/ss
					// rounded rect, radius 7
					cx, cy := math.Max(7, math.Min(25, px)), math.Max(7, math.Min(25, py))
					if math.Hypot(px-cx, py-cy) > 7 {
						continue
					}
					bg++
					white := false
					for i, p := range pts {
						q := pts[(i+1)%3]
						if math.Hypot(px-p[0], py-p[1]) <= 4 || segDist(px, py, p[0], p[1], q[0], q[1]) <= 1.25 {
							white = true
						}
					}
					if white {
						fg++
					}
				}
			}
			a := bg / (ss * ss)
			f := 0.0
			if bg > 0 {
				f = fg / bg
			}
			mix := func(c uint8) uint8 { return uint8(float64(c)*(1-f) + 255*f + 0.5) }
			img.Set(x, y, color.NRGBA{mix(blue.R), mix(blue.G), mix(blue.B), uint8(a*255 + 0.5)})
		}
	}
	var p bytes.Buffer
	png.Encode(&p, img)
	var out bytes.Buffer
	binary.Write(&out, binary.LittleEndian, []uint16{0, 1, 1})
	out.Write([]byte{n, n, 0, 0})
	binary.Write(&out, binary.LittleEndian, []uint16{1, 32})
	binary.Write(&out, binary.LittleEndian, []uint32{uint32(p.Len()), 22})
	out.Write(p.Bytes())
	os.WriteFile(os.Args[1], out.Bytes(), 0o644)
}
