"""dmaharness: build, boot and stress instrumented kernels; see README.md."""
