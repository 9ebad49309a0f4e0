# spec-check for nodes that are not set up for Python: `spec-check check` in a container,
# reading the host's /sys, /proc and root filesystem mounted under /host, and the GPU
# driver through NVML (libnvidia-ml, which the NVIDIA container runtime mounts in).
#
#   docker build -t spec-check:0.4.0.dev0 .
#   docker run --rm --network host --pid host \
#     -v /sys:/host/sys:ro -v /proc:/host/proc:ro -v /:/host/root:ro \
#     --gpus all spec-check:0.4.0.dev0
#
# docs/deploy.md explains each mount and flag (Kubernetes DaemonSet, pool Job, Slurm).

# --- build: the wheel from this checkout (no network needed beyond the base image and
# hatchling, the build backend)
FROM python:3.12-slim AS build
WORKDIR /src
COPY . .
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /dist .

# --- run: the wheel and its dependencies, nothing else
FROM python:3.12-slim
LABEL org.opencontainers.image.title="training-spec-check" \
      org.opencontainers.image.description="Check GPU training nodes against the 2026 large-scale training specification" \
      org.opencontainers.image.version="0.4.0.dev0" \
      org.opencontainers.image.source="https://github.com/spec-check/spec-check" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /dist/ /tmp/dist/
RUN pip install --no-cache-dir /tmp/dist/*.whl && rm -rf /tmp/dist
# NVML lives in the driver's libnvidia-ml.so.1, mounted by the NVIDIA runtime for these
ENV NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=utility \
    PYTHONDONTWRITEBYTECODE=1
ENTRYPOINT ["spec-check"]
# the host's trees under /host; --nvml because /host/sys is not this container's /sys
CMD ["check", "--sysfs", "/host/sys", "--procfs", "/host/proc", "--rootfs", "/host/root", "--nvml"]
