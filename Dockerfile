# Classroom image: the same server, the book prebuilt, run as an unprivileged user.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --workspace && target/release/pipebook build

FROM debian:bookworm-slim
RUN useradd --create-home --uid 1000 pipebook
WORKDIR /home/pipebook/app
COPY --from=build /src/target/release/pipebook /src/target/release/pipebench /usr/local/bin/
COPY --from=build /src/book.toml ./book.toml
COPY --from=build /src/book ./book
COPY --from=build /src/bench/src ./bench/src
COPY --from=build /src/target/book ./target/book
# The state folder (results.jsonl, labs.jsonl); docker-compose.yml mounts a volume here.
RUN mkdir -p /home/pipebook/state && chown -R pipebook:pipebook /home/pipebook
USER pipebook
EXPOSE 8000
ENTRYPOINT ["pipebook", "--book-root", "/home/pipebook/app"]
