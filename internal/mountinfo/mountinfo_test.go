package mountinfo

import "testing"

// Locate names a path by its device and its place in that device's file
// system: the same for a tree and a bind mount of it, whichever is
// asked; the last mount at a point hides the ones before it.
func TestLocate(t *testing.T) {
	ms := []Mount{
		{Dev: "8:1", Root: "/", Point: "/"},
		{Dev: "8:2", Root: "/", Point: "/home"},
		{Dev: "8:2", Root: "/ann/ws/tools", Point: "/opt/pf"},
		{Dev: "0:5", Root: "/", Point: "/opt/hidden"},
		{Dev: "0:6", Root: "/", Point: "/opt/hidden"},
	}
	for _, c := range []struct{ path, dev, fs string }{
		{"/", "8:1", "/"},
		{"/etc/passwd", "8:1", "/etc/passwd"},
		{"/home", "8:2", "/"},
		{"/homeless", "8:1", "/homeless"},
		{"/home/ann/ws/tools/launcher", "8:2", "/ann/ws/tools/launcher"},
		{"/opt/pf/launcher", "8:2", "/ann/ws/tools/launcher"},
		{"/opt/pf", "8:2", "/ann/ws/tools"},
		{"/opt/hidden/x", "0:6", "/x"},
	} {
		dev, fs, ok := Locate(ms, c.path)
		if !ok || dev != c.dev || fs != c.fs {
			t.Errorf("Locate(%s) = %s %s %v, want %s %s", c.path, dev, fs, ok, c.dev, c.fs)
		}
	}
	if _, _, ok := Locate(ms[1:2], "/etc"); ok {
		t.Error("a path no mount holds was located")
	}
}
