// Command image builds wasmsched's container image without a container
// runtime (make image runs it): a static binary on an empty base, in one
// layer, written as an OCI image layout and a docker-style tarball, with a
// CycloneDX SBOM of the Go modules the binary links next to them.
//
//	go -C hack/image run . -out ../../build   # make image
//
// writes under -out:
//
//	wasmsched-oci/            the image as an OCI layout, tagged "dev":
//	                          crane push build/wasmsched-oci REGISTRY/wasmsched:TAG
//	wasmsched.tar             the same image as a docker-style tarball tagged
//	                          wasmsched:dev (kind load image-archive, docker load)
//	wasmsched.digest          the image's manifest digest (sha256:...)
//	wasmsched.sbom.cdx.json   the CycloneDX SBOM (cyclonedx-gomod bin)
//	image/wasmsched           the binary in the layer
//
// The image is reproducible: two builds of one commit give one digest. The
// binary is built with CGO_ENABLED=0, -trimpath, no VCS stamping and the
// version and commit of hack/version.sh set by -ldflags -X (as make build
// does), every time in the image is the commit time (or SOURCE_DATE_EPOCH),
// and the layer's one file has a fixed owner and mode.
//
// # Notes
//
// A pushed docker tarball gets docker media types, and so another manifest
// digest than the OCI layout's (the content is the same): push the layout.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// What the image is made of. The UID and GID are distroless's "nonroot",
// numeric so that runAsNonRoot can verify them (deploy/deployment.yaml runs
// as 65532 too).
const (
	binaryPath  = "wasmsched"
	user        = "65532:65532"
	source      = "https://github.com/wasmsched/wasmsched"
	mainPackage = "./cmd/wasmsched"
	// The variables `wasmsched version` prints (host/app/cli); the Makefile
	// sets the same ones for bin/wasmsched.
	versionVar = "github.com/wasmsched/wasmsched/host/app/cli.buildVersion"
	commitVar  = "github.com/wasmsched/wasmsched/host/app/cli.buildCommit"
)

// entrypoint is the image's entrypoint: the scheduler, so that the container's
// arguments are run's flags.
var entrypoint = []string{"/wasmsched", "run"}

// Names of the outputs under -out.
const (
	layoutDir  = "wasmsched-oci"
	tarFile    = "wasmsched.tar"
	digestFile = "wasmsched.digest"
	sbomFile   = "wasmsched.sbom.cdx.json"
	workDir    = "image"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the builder's flags.
type options struct {
	repo    string // the wasmsched checkout
	out     string // where the outputs go
	tag     string // the tarball's tag
	goarch  string
	version string // empty: hack/version.sh version
	commit  string // empty: hack/version.sh commit
	epoch   string // empty: hack/version.sh epoch
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.repo, "repo", "../..", "the wasmsched checkout to build")
	fs.StringVar(&o.out, "out", "../../build", "directory for the image, its tarball and SBOM")
	fs.StringVar(&o.tag, "tag", "wasmsched:dev", "tag of the tarball (deploy/deployment.yaml runs wasmsched:dev)")
	fs.StringVar(&o.goarch, "goarch", runtime.GOARCH, "architecture of the binary and the image (linux only)")
	fs.StringVar(&o.version, "version", "", "version stamped in the binary and the labels (default: hack/version.sh version)")
	fs.StringVar(&o.commit, "commit", "", "commit stamped in the binary and the labels (default: hack/version.sh commit)")
	fs.StringVar(&o.epoch, "epoch", "", "Unix time of every timestamp in the image (default: hack/version.sh epoch: SOURCE_DATE_EPOCH or the commit time)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "image: unexpected arguments %q (every input is a flag; -h lists them)\n", fs.Args())
		return 2
	}
	res, err := build(ctx, o, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "image: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "image: %s (%s, commit %s)\n  %s\n  %s\n  %s\n",
		res.digest, res.version, res.commit,
		filepath.Join(o.out, layoutDir), filepath.Join(o.out, tarFile), filepath.Join(o.out, sbomFile))
	return 0
}

// result is what build made.
type result struct {
	digest          v1.Hash
	version, commit string
	created         time.Time
}

// build makes the binary, the SBOM and the image, and writes them under o.out.
func build(ctx context.Context, o options, log io.Writer) (result, error) {
	repo, err := filepath.Abs(o.repo)
	if err != nil {
		return result{}, err
	}
	if _, err := os.Stat(filepath.Join(repo, "cmd", "wasmsched")); err != nil {
		return result{}, fmt.Errorf("-repo %s is not a wasmsched checkout (no cmd/wasmsched): %w", o.repo, err)
	}
	out, err := filepath.Abs(o.out)
	if err != nil {
		return result{}, err
	}
	tag, err := name.NewTag(o.tag)
	if err != nil {
		return result{}, fmt.Errorf("-tag %q: %w", o.tag, err)
	}
	res := result{version: o.version, commit: o.commit}
	for _, f := range []struct {
		v   *string
		arg string
	}{{&res.version, "version"}, {&res.commit, "commit"}, {&o.epoch, "epoch"}} {
		if *f.v == "" {
			if *f.v, err = command(ctx, repo, nil, filepath.Join(repo, "hack", "version.sh"), f.arg); err != nil {
				return result{}, err
			}
		}
	}
	sec, err := strconv.ParseInt(o.epoch, 10, 64)
	if err != nil || sec < 0 {
		return result{}, fmt.Errorf("-epoch %q: want Unix seconds", o.epoch)
	}
	res.created = time.Unix(sec, 0).UTC()

	work := filepath.Join(out, workDir)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return result{}, err
	}
	bin := filepath.Join(work, binaryPath)
	fmt.Fprintf(log, "image: go build %s (%s, commit %s, linux/%s)\n", mainPackage, res.version, res.commit, o.goarch)
	if err := goBuild(ctx, repo, bin, o.goarch, res.version, res.commit); err != nil {
		return result{}, err
	}
	fmt.Fprintf(log, "image: SBOM (cyclonedx-gomod)\n")
	if _, err := command(ctx, filepath.Join(repo, "hack", "image"), nil, "go", "tool", "cyclonedx-gomod", "bin",
		"-json", "-noserial", "-notimestamp", "-version", res.version, "-output", filepath.Join(out, sbomFile), bin); err != nil {
		return result{}, fmt.Errorf("SBOM: %w", err)
	}

	layerTar := filepath.Join(work, "layer.tar")
	if err := writeLayer(layerTar, bin, res.created); err != nil {
		return result{}, err
	}
	img, err := image(layerTar, o.goarch, res)
	if err != nil {
		return result{}, err
	}
	if res.digest, err = img.Digest(); err != nil {
		return result{}, err
	}

	fmt.Fprintf(log, "image: writing %s and %s\n", layoutDir, tarFile)
	dir := filepath.Join(out, layoutDir)
	if err := os.RemoveAll(dir); err != nil {
		return result{}, err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return result{}, err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": tag.TagStr(),
	})); err != nil {
		return result{}, fmt.Errorf("write the OCI layout: %w", err)
	}
	if err := tarball.WriteToFile(filepath.Join(out, tarFile), tag, img); err != nil {
		return result{}, fmt.Errorf("write the tarball: %w", err)
	}
	if err := os.WriteFile(filepath.Join(out, digestFile), []byte(res.digest.String()+"\n"), 0o644); err != nil {
		return result{}, err
	}
	return res, nil
}

// ldflags are the linker flags of the image's binary: stripped, with the
// version and commit that `wasmsched version` prints.
func ldflags(version, commit string) string {
	return fmt.Sprintf("-s -w -X %s=%s -X %s=%s", versionVar, version, commitVar, commit)
}

// goBuild builds the static binary. The environment that would change the
// output is fixed; GOFLAGS is replaced so that a -race or -mod of the caller's
// cannot leak in.
func goBuild(ctx context.Context, repo, out, goarch, version, commit string) error {
	env := []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=" + goarch, "GOFLAGS=-buildvcs=false"}
	_, err := command(ctx, repo, env, "go", "build", "-trimpath", "-ldflags", ldflags(version, commit), "-o", out, mainPackage)
	return err
}

// writeLayer writes the layer's tar: the binary alone at /wasmsched, owned by
// root and not writable by the user the image runs as, stamped with created.
func writeLayer(path, bin string, created time.Time) error {
	f, err := os.Open(bin)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(out)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     binaryPath,
		Mode:     0o555,
		Size:     st.Size(),
		ModTime:  created,
		Format:   tar.FormatUSTAR,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		out.Close()
		return err
	}
	if _, err := io.Copy(tw, f); err != nil {
		out.Close()
		return err
	}
	if err := tw.Close(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// image assembles the image from the layer's tar: OCI media types, one
// layer, the config and every timestamp fixed.
func image(layerTar, goarch string, res result) (v1.Image, error) {
	layer, err := tarball.LayerFromFile(layerTar,
		tarball.WithMediaType(types.OCILayer),
		tarball.WithCompressionLevel(gzip.BestCompression),
		tarball.WithCompressedCaching)
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: res.created}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	cf, err := base.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", goarch
	cf.Created = created
	cf.Config = v1.Config{
		Entrypoint: entrypoint,
		User:       user,
		WorkingDir: "/",
		Labels:     labels(res),
	}
	img, err := mutate.ConfigFile(base, cf)
	if err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   created,
			CreatedBy: "make image (hack/image): CGO_ENABLED=0 go build -trimpath " + mainPackage,
		},
	})
}

// labels are the image's OCI annotations, as config labels.
func labels(res result) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "wasmsched",
		"org.opencontainers.image.description": "A Kubernetes scheduler whose policies are WebAssembly modules",
		"org.opencontainers.image.version":     res.version,
		"org.opencontainers.image.revision":    res.commit,
		"org.opencontainers.image.source":      source,
		"org.opencontainers.image.created":     res.created.Format(time.RFC3339),
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
}

// command runs name with args in dir and returns its trimmed standard
// output; env is added to the process's environment. A failure carries the
// command's standard error.
func command(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.Error
		if errors.As(err, &ee) {
			msg = "is it installed and on PATH?"
		}
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
	}
	return strings.TrimSpace(stdout.String()), nil
}
