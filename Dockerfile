# The one image of playtester: api, worker, flower and migrate all run it.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1

WORKDIR /app

# Dependencies first, from pyproject.toml alone, so editing the code reuses this layer.
COPY pyproject.toml ./
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
print('\n'.join(p['dependencies'] + p['optional-dependencies']['service']))" \
        > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt \
    && useradd --create-home --uid 1000 playtester

COPY README.md ./
COPY engines ./engines
COPY workers ./workers
COPY api ./api
COPY analysis ./analysis
COPY storage ./storage
COPY docs/studies ./docs/studies
RUN pip install --no-deps .

# The compiled search's kernels, compiled once here into a cache the workers read (and may
# add to, if their CPU differs from the build machine's).
ENV NUMBA_CACHE_DIR=/app/numba-cache
RUN python -m engines.compiled.warm && chown -R playtester /app/numba-cache

USER playtester
EXPOSE 8000 5555
CMD ["playtester", "serve", "--host", "0.0.0.0", "--port", "8000"]
