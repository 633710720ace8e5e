# A Debian base with python3, python3-venv and python3-pip, on top of an image made by
# `debootstrap --variant=minbase` and `docker import` (docker/build-image does both).
ARG DEBIAN_IMAGE=kemu-debian:bookworm
FROM ${DEBIAN_IMAGE}

RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        python3 python3-venv python3-pip ca-certificates \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/*
