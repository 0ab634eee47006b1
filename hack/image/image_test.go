package main

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The crane that deploy/README.md and README.md tell users to push with.
const crane = "github.com/google/go-containerregistry/cmd/crane@v0.22.1"

// TestImage builds the image twice, as make image does, and checks what a
// cluster will run: one layer holding the static binary alone, the
// entrypoint, the user, the labels, the version the binary prints, the SBOM,
// the tarball, one digest for both builds, and that the documented crane push
// of the layout publishes that digest.
func TestImage(t *testing.T) {
	ctx := context.Background()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// What git says, asked here rather than through hack/version.sh.
	commit := git(t, repo, "rev-parse", "HEAD")
	epoch := git(t, repo, "log", "-1", "--format=%ct", "HEAD")
	if e := os.Getenv("SOURCE_DATE_EPOCH"); e != "" {
		epoch = e
	}
	sec, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	created := time.Unix(sec, 0).UTC()

	var builds [2]result
	var outs [2]string
	for i := range builds {
		outs[i] = t.TempDir()
		var log bytes.Buffer
		if builds[i], err = build(ctx, options{repo: repo, out: outs[i], tag: "wasmsched:dev", goarch: runtime.GOARCH}, &log); err != nil {
			t.Fatalf("build %d: %v\n%s", i+1, err, log.String())
		}
	}
	res := builds[0]
	if builds[1].digest != res.digest {
		t.Errorf("two builds of one commit, two digests: %s and %s", res.digest, builds[1].digest)
	}
	version := res.version
	if res.commit != commit {
		t.Errorf("commit %s, git says %s", res.commit, commit)
	}
	if !strings.HasPrefix(version, "v") || (!strings.Contains(version, commit[:12]) && git(t, repo, "tag", "--points-at", "HEAD") == "") {
		t.Errorf("version %q: neither a tag on HEAD nor a pseudo-version of %s", version, commit[:12])
	}
	if !res.created.Equal(created) {
		t.Errorf("created %s, want the commit time %s", res.created, created)
	}
	out := outs[0]
	if b, err := os.ReadFile(filepath.Join(out, digestFile)); err != nil || string(b) != res.digest.String()+"\n" {
		t.Errorf("%s: %q, %v; want %s", digestFile, b, err, res.digest)
	}

	// The OCI layout: one image, tagged dev, with that digest.
	idx, err := layout.ImageIndexFromPath(filepath.Join(out, layoutDir))
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != res.digest || im.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "dev" {
		t.Fatalf("index.json %+v, want one manifest %s tagged dev", im.Manifests, res.digest)
	}
	img, err := idx.Image(res.digest)
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON {
		t.Errorf("media types %s / %s, want OCI's", m.MediaType, m.Config.MediaType)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != types.OCILayer {
		t.Fatalf("layers %+v, want exactly one %s", m.Layers, types.OCILayer)
	}

	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	wantConfig := v1.Config{
		Entrypoint: []string{"/wasmsched", "run"},
		User:       "65532:65532",
		WorkingDir: "/",
		Labels: map[string]string{
			"org.opencontainers.image.title":       "wasmsched",
			"org.opencontainers.image.description": "A Kubernetes scheduler whose policies are WebAssembly modules",
			"org.opencontainers.image.version":     version,
			"org.opencontainers.image.revision":    commit,
			"org.opencontainers.image.source":      "https://github.com/wasmsched/wasmsched",
			"org.opencontainers.image.created":     created.Format(time.RFC3339),
			"org.opencontainers.image.licenses":    "Apache-2.0",
		},
	}
	if diff := cmp.Diff(wantConfig, cf.Config); diff != "" {
		t.Errorf("config (-want, +got):\n%s", diff)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH || !cf.Created.Equal(created) {
		t.Errorf("os/arch %s/%s created %s, want linux/%s %s", cf.OS, cf.Architecture, cf.Created.Time, runtime.GOARCH, created)
	}
	for _, h := range cf.History {
		if !h.Created.Equal(created) {
			t.Errorf("history entry %q created %s, want %s", h.CreatedBy, h.Created.Time, created)
		}
	}

	// The layer: /wasmsched alone (no shell, nothing else), root's, not
	// writable, stamped with the commit time.
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	bin := filepath.Join(t.TempDir(), "wasmsched")
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Name != "wasmsched" {
			continue
		}
		if h.Typeflag != tar.TypeReg || h.Mode != 0o555 || h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(created) {
			t.Errorf("/wasmsched: type %c mode %o owner %d:%d time %s; want a regular file, 0555, 0:0, %s",
				h.Typeflag, h.Mode, h.Uid, h.Gid, h.ModTime, created)
		}
		f, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(f, tr); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(names, []string{"wasmsched"}) {
		t.Fatalf("layer holds %q, want only wasmsched", names)
	}

	// The binary: static, built as the image's doc says, and it prints the
	// labels' version and commit.
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary has a %s program header: it is not static", p.Type)
		}
	}
	ef.Close()
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	for k, want := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true", "GOOS": "linux", "GOARCH": runtime.GOARCH} {
		if settings[k] != want {
			t.Errorf("build setting %s=%q, want %q", k, settings[k], want)
		}
	}
	wantVersion := fmt.Sprintf("wasmsched %s\ncommit %s\n", version, commit)
	if got := runBinary(t, bin, 0, "version"); !strings.HasPrefix(got, wantVersion) {
		t.Errorf("wasmsched version printed %q, want it to start with %q", got, wantVersion)
	}
	// The entrypoint is the run command: it fails on a missing kubeconfig,
	// saying so.
	args := append(slices.Clone(cf.Config.Entrypoint[1:]), "--kubeconfig", "/nonexistent")
	if got := runBinary(t, bin, 1, args...); !strings.Contains(got, "wasmsched run failed") || !strings.Contains(got, "/nonexistent") {
		t.Errorf("the entrypoint's run with a missing kubeconfig printed %q, want run's error", got)
	}

	// The SBOM names the binary's version and every module it links.
	var bom struct {
		BOMFormat string `json:"bomFormat"`
		Metadata  struct {
			Component struct{ Name, Version string } `json:"component"`
		} `json:"metadata"`
		Components []struct{ Name, Version string } `json:"components"`
	}
	b, err := os.ReadFile(filepath.Join(out, sbomFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &bom); err != nil {
		t.Fatalf("%s: %v", sbomFile, err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.Metadata.Component.Name != "github.com/wasmsched/wasmsched" || bom.Metadata.Component.Version != version {
		t.Errorf("SBOM: format %q, component %+v; want CycloneDX, github.com/wasmsched/wasmsched %s", bom.BOMFormat, bom.Metadata.Component, version)
	}
	listed := map[string]string{}
	for _, c := range bom.Components {
		listed[c.Name] = c.Version
	}
	if len(bi.Deps) < 50 {
		t.Errorf("the binary links %d modules: expected client-go, wazero and the rest", len(bi.Deps))
	}
	for _, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		if listed[d.Path] != d.Version {
			t.Errorf("SBOM: module %s is %q, the binary links %s", d.Path, listed[d.Path], d.Version)
		}
	}
	b2, err := os.ReadFile(filepath.Join(outs[1], sbomFile))
	if err != nil || !bytes.Equal(b, b2) {
		t.Errorf("the two builds' SBOMs differ (%v)", err)
	}

	// The tarball: the same config and layer, tagged wasmsched:dev.
	tarPath := filepath.Join(out, tarFile)
	tag := name.MustParseReference("wasmsched:dev").(name.Tag)
	timg, err := tarball.ImageFromPath(tarPath, &tag)
	if err != nil {
		t.Fatalf("%s has no wasmsched:dev: %v", tarFile, err)
	}
	tcfg, err := timg.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	if tcfg != m.Config.Digest {
		t.Errorf("the tarball's config is %s, the layout's %s", tcfg, m.Config.Digest)
	}
	tl, err := timg.Layers()
	if err != nil {
		t.Fatal(err)
	}
	ld, _ := layers[0].DiffID()
	if len(tl) != 1 {
		t.Fatalf("the tarball has %d layers, want 1", len(tl))
	}
	if td, err := tl[0].DiffID(); err != nil || td != ld {
		t.Errorf("the tarball's layer is %s (%v), the layout's %s", td, err, ld)
	}

	// Pushing the layout as the README says, with crane, to a registry in
	// this process, publishes the digest make image printed.
	reg := httptest.NewServer(registry.New())
	defer reg.Close()
	u, err := url.Parse(reg.URL)
	if err != nil {
		t.Fatal(err)
	}
	ref := u.Host + "/wasmsched:test"
	cmd := exec.CommandContext(ctx, "go", "run", crane, "push", filepath.Join(out, layoutDir), ref)
	cmd.Dir = repo
	pushed, err := cmd.Output()
	if err != nil {
		t.Fatalf("crane push: %v\n%s", err, stderrOf(err))
	}
	if want := u.Host + "/wasmsched@" + res.digest.String(); strings.TrimSpace(string(pushed)) != want {
		t.Errorf("crane push printed %q, want %q", pushed, want)
	}
	pref, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(pref)
	if err != nil {
		t.Fatal(err)
	}
	if desc.Digest != res.digest {
		t.Errorf("the registry holds %s, make image built %s", desc.Digest, res.digest)
	}
}

// TestBadInput: the builder refuses what it cannot build, saying what is
// wrong, before building anything.
func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"extra"}, 2, "unexpected arguments"},
		{[]string{"-nosuchflag"}, 2, "flag provided but not defined"},
		{[]string{"-repo", t.TempDir()}, 1, "is not a wasmsched checkout"},
		{[]string{"-tag", "Not A Tag", "-out", t.TempDir()}, 1, "-tag"},
		{[]string{"-epoch", "yesterday", "-version", "v1.0.0", "-commit", "abc", "-out", t.TempDir()}, 1, `-epoch "yesterday": want Unix seconds`},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderrOf(err))
	}
	return strings.TrimSpace(string(out))
}

// runBinary runs the extracted binary, with no environment, and returns its
// combined output; the exit code must be code.
func runBinary(t *testing.T, bin string, code int, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{}
	out, err := cmd.CombinedOutput()
	got := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		got = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %q: %v", bin, args, err)
	}
	if got != code {
		t.Errorf("%s %q: exit %d, want %d; output:\n%s", filepath.Base(bin), args, got, code, out)
	}
	return string(out)
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}
