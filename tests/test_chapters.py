"""Every chapter notebook runs top to bottom in quick mode and writes its figures.

The notebooks are executed by ``chapters/run.py`` (imported from its path: it is a script,
not a package module) with TRACEGRAD_QUICK=1 and the figures and logs folders pointed at
pytest's temporary directory, so the committed figures/ and chapters/logs/ stay untouched.
"""
import importlib.util
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CHAPTERS = REPO / "chapters"

# Notebook stem -> the pytest marker of the stage it teaches (besides `chapters`).
STAGE = {
    "01_tensors": "stage2",
    "02_neural_networks": "stage2",
    "03_scalar_autograd": "stage1",
    "04_tensor_autograd": "stage2",
    "05_mnist_optimizers": "stage4",
    "06_native_engine": "stage3",
    "06b_cuda": "stage3",
    "07_language_models": "stage4",
    "08_tokenization": "stage4",
    "08b_recurrent": "stage4",
    "09_gpt": "stage4",
    "10_chatbots": "stage4",
    "11_lazy_fusion": "stage3",
    "12_convolutions": "stage4",
    "13_inference_compiler": "stage4",
}

# Notebook stem -> the files it must write under $TRACEGRAD_FIGURES.
FIGURES = {
    "01_tensors": ["strides_visualization.svg", "broadcasting_scalar_stretch.svg"],
    "02_neural_networks": ["neural_network.svg", "init_variance_depth.png", "mlp_training_loss.png",
                           "mlp_decision_boundary.png", "one_hidden_layer_parabola.png"],
    "03_scalar_autograd": ["upstream-local-gradient.svg", "chain_graph.svg",
                           "bobnet_loss.png", "bobnet_graph.svg"],
    "04_tensor_autograd": ["opgraph_1.png"],
    "05_mnist_optimizers": ["mnist_net.png", "mnist_loss_sgd_avg.png", "mnist_loss_sgd_no_average.png",
                            "mnist_loss_with_momentum.png", "mnist_loss_with_rmsprop.png",
                            "mnist_loss_with_adam.png", "mnist_inference_screenshot.png"],
    "07_language_models": ["bigram_counts.png", "mlplm_loss.png", "mlplm_embedding.png"],
    "08_tokenization": ["tokenizer_example.png"],
    "08b_recurrent": ["rnn_gradient_through_time.png", "rnn_clipping.png", "lstm_gradient_through_time.png",
                      "rnn_vs_gpt.png"],
    "09_gpt": ["tinygpt2-lossplot.png", "gpt_lr_schedule.png", "gpt_char_loss.png",
               "attention_matrix_char.png", "attention_matrix_gpt2.png"],
    "10_chatbots": ["chat_finetune_loss.png", "chatbot_transcript.png", "attention_matrix_chatbot.png"],
    "06_native_engine": ["native_op_times.svg", "matmul_gflops.svg", "gemm_ladder.svg",
                         "elementwise_hierarchy.svg", "mnist_step_profile.svg"],
    "06b_cuda": ["cuda_grid_stride.png", "cuda_mnist_loss.png"],
    "11_lazy_fusion": ["lazy_recorded.svg", "lazy_canonical.svg", "lazy_dead.svg", "lazy_fused.svg",
                       "lazy_speedups.png", "capture_plan.svg", "capture_memory_plan.svg", "compile_timings.svg"],
    "12_convolutions": ["conv_stride_padding_dilation.png", "pooling_upsampling.png", "mnist_cnn_loss.png",
                        "cnn_filters.png", "cnn_feature_maps.png", "conv_speed_ladder.png"],
    "13_inference_compiler": ["onnx_unet_graph.svg", "onnx_pass_fold.svg", "onnx_pass_canonicalize.svg",
                              "onnx_pass_dce.svg", "onnx_supergraph.svg", "onnx_memory_plan.png",
                              "unet_denoised_digits.png"],
}


def _load_runner():
    spec = importlib.util.spec_from_file_location("chapters_run", CHAPTERS / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _params():
    params = []
    for path in sorted(CHAPTERS.glob("*.ipynb")):
        marks = [pytest.mark.chapters, pytest.mark.slow]        # a minute or more each: make test-slow
        if path.stem in STAGE:
            marks.append(getattr(pytest.mark, STAGE[path.stem]))
        params.append(pytest.param(path.name, marks=marks, id=path.stem))
    return params


@pytest.mark.parametrize("notebook", _params())
def test_notebook_runs_in_quick_mode(notebook, tmp_path):
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's `dot` is not installed (the chapters draw graphs with graphviz)")
    runner = _load_runner()
    figures, logs = tmp_path / "figures", tmp_path / "logs"
    figures.mkdir()
    logs.mkdir()
    env = {"TRACEGRAD_FIGURES": str(figures), "TRACEGRAD_LOGS": str(logs), "MPLBACKEND": "Agg"}

    runner.execute(CHAPTERS / notebook, quick=True, env=env)   # raises on any cell error

    stem = Path(notebook).stem
    for name in FIGURES.get(stem, []):
        path = figures / name
        assert path.is_file(), f"{notebook} did not write {name} to $TRACEGRAD_FIGURES"
        assert path.stat().st_size > 0, f"{notebook} wrote an empty {name}"
