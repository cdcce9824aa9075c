# Classroom image: the same server, run as an unprivileged user. `pipebook` carries
# the book and the sources its listings quote, so the image holds one binary.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release -p pipebook

FROM debian:bookworm-slim
RUN useradd --create-home --uid 1000 pipebook
WORKDIR /home/pipebook
COPY --from=build /src/target/release/pipebook /usr/local/bin/
# The state folder (results.jsonl, labs.jsonl); docker-compose.yml mounts a volume here.
RUN mkdir -p /home/pipebook/state && chown -R pipebook:pipebook /home/pipebook
USER pipebook
EXPOSE 8000
ENTRYPOINT ["pipebook"]
