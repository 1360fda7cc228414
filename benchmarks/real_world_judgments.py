"""Hand judgments of dllint's on-by-default findings on the second set of real_world.py's sources.

Each row: (source, "path:line", code, verdict, shape, reason). The verdict comes from reading
the code at the pinned commit: "true" (the rule's claim holds and its advice helps), "false"
(it does not), "debatable" (holds in some runs or only for part of the claim). ``shape`` names
the false-positive shape of FALSE_POSITIVE_SHAPES.md (S1-S6: issue 10's shapes; T: DL202's
threshold, issue 10 item 4; N1...: new ones), empty for true positives.

real_world.py --judge matches findings against these rows (the sources are pinned, so lines
do not move) and reports precision per rule, plus any finding no row judges.
"""

from __future__ import annotations

T, F, D = "true", "false", "debatable"

JUDGMENTS: tuple[tuple[str, str, str, str, str, str], ...] = (
    # --- facebookresearch/detr
    ("facebookresearch+detr", "main.py:155", "DL201", T, "", "train loader, train_one_epoch per epoch (main.py:196)"),
    ("facebookresearch+detr", "main.py:157", "DL201", T, "", "val loader, evaluate() every epoch (main.py:214)"),
    # --- facebookresearch/mae
    ("facebookresearch+mae", "main_finetune.py:141", "DL202", F, "T", "--num_workers 10 is per GPU in a DDP script"),
    ("facebookresearch+mae", "main_finetune.py:202", "DL201", T, "", "train loader per epoch (main_finetune.py:313)"),
    ("facebookresearch+mae", "main_finetune.py:210", "DL201", T, "", "val loader, evaluate() every epoch (:325)"),
    ("facebookresearch+mae", "main_linprobe.py:99", "DL202", F, "T", "--num_workers 10 per GPU (DDP)"),
    ("facebookresearch+mae", "main_linprobe.py:173", "DL201", T, "", "train loader per epoch (:273)"),
    ("facebookresearch+mae", "main_linprobe.py:181", "DL201", T, "", "val loader every epoch (:285)"),
    ("facebookresearch+mae", "main_pretrain.py:90", "DL202", F, "T", "--num_workers 10 per GPU (DDP)"),
    ("facebookresearch+mae", "main_pretrain.py:147", "DL201", T, "", "train loader per epoch (:191)"),
    # --- facebookresearch/dino
    ("facebookresearch+dino", "eval_copy_detection.py:160", "DL201", F, "S2",
     "fresh loader per call, one pass through MetricLogger().log_every(data_loader, 10) (:164)"),
    ("facebookresearch+dino", "eval_copy_detection.py:223", "DL202", F, "T", "--num_workers 10 'per GPU'"),
    ("facebookresearch+dino", "eval_image_retrieval.py:94", "DL202", F, "T", "--num_workers 10 'per GPU'"),
    ("facebookresearch+dino", "eval_image_retrieval.py:113", "DL201", F, "S2",
     "passed once to eval_knn.extract_features (other file), one pass through log_every (:165)"),
    ("facebookresearch+dino", "eval_image_retrieval.py:121", "DL201", F, "S2", "same, query loader (:166)"),
    ("facebookresearch+dino", "eval_knn.py:41", "DL201", F, "S2",
     "passed once to same-file extract_features, one pass through log_every (:76, :99)"),
    ("facebookresearch+dino", "eval_knn.py:49", "DL201", F, "S2", "same, val loader (:78)"),
    ("facebookresearch+dino", "eval_knn.py:209", "DL202", F, "T", "--num_workers 10 'per GPU'"),
    ("facebookresearch+dino", "eval_linear.py:72", "DL201", T, "", "validate_network every val_freq epochs (:132)"),
    ("facebookresearch+dino", "eval_linear.py:93", "DL201", T, "", "train() per epoch (:126)"),
    ("facebookresearch+dino", "eval_linear.py:275", "DL202", F, "T", "--num_workers 10 'per GPU'"),
    ("facebookresearch+dino", "main_dino.py:125", "DL202", F, "T", "--num_workers 10 'per GPU'"),
    ("facebookresearch+dino", "main_dino.py:147", "DL201", T, "", "train_one_epoch per epoch (:273)"),
    # --- facebookresearch/ConvNeXt
    ("facebookresearch+ConvNeXt", "main.py:179", "DL202", F, "T", "--num_workers 10 per GPU (DDP)"),
    ("facebookresearch+ConvNeXt", "main.py:250", "DL201", T, "", "train loader per epoch (:403)"),
    ("facebookresearch+ConvNeXt", "main.py:259", "DL201", T, "", "val loader every epoch (:416)"),
    # --- facebookresearch/deit
    ("facebookresearch+deit", "main.py:176", "DL202", F, "T", "--num_workers 10 per GPU (DDP)"),
    ("facebookresearch+deit", "main.py:236", "DL201", T, "", "train loader per epoch (:425)"),
    ("facebookresearch+deit", "main.py:246", "DL201", T, "", "val loader every epoch (:447)"),
    # --- facebookresearch/moco
    ("facebookresearch+moco", "main_lincls.py:51", "DL202", F, "N1",
     "default 32 is per node: args.workers is divided by ngpus_per_node before use (:283)"),
    ("facebookresearch+moco", "main_lincls.py:367", "DL201", T, "", "train() per epoch (:405)"),
    ("facebookresearch+moco", "main_lincls.py:376", "DL201", T, "", "validate() every epoch (:408)"),
    ("facebookresearch+moco", "main_moco.py:55", "DL202", F, "N1", "same per-node default, divided at :271"),
    ("facebookresearch+moco", "main_moco.py:368", "DL201", T, "", "train() per epoch (:384)"),
    # --- sthalles/SimCLR
    ("sthalles+SimCLR", "feature_eval/mini_batch_logistic_regression_evaluator.ipynb:11", "DL201", T, "",
     "test_loader (num_workers=10) iterated in the 100-epoch loop of a later cell"),
    ("sthalles+SimCLR", "feature_eval/mini_batch_logistic_regression_evaluator.ipynb:12", "DL202", F, "T",
     "10 workers, at or under the 16 of issue 10"),
    ("sthalles+SimCLR", "feature_eval/mini_batch_logistic_regression_evaluator.ipynb:25", "DL201", T, "",
     "same, CIFAR-10 variant"),
    ("sthalles+SimCLR", "feature_eval/mini_batch_logistic_regression_evaluator.ipynb:26", "DL202", F, "T",
     "10 workers"),
    ("sthalles+SimCLR", "run.py:23", "DL202", F, "T", "--workers 12 for one GPU"),
    ("sthalles+SimCLR", "run.py:71", "DL201", T, "", "SimCLR.train iterates it every epoch (simclr.py:68-69)"),
    # --- karpathy/minGPT
    ("karpathy+minGPT", "mingpt/trainer.py:68", "DL201", F, "S3",
     "RandomSampler(replacement=True, num_samples=int(1e10)); iter() re-created only on StopIteration (:85-87)"),
    # --- pytorch/examples
    ("pytorch+examples", "dcgan/main.py:107", "DL201", T, "", "module-level epoch loop (:222-223)"),
    ("pytorch+examples", "dcgan/main.py:222", "DL101", T, "", "module-level loop over a 2-worker loader"),
    ("pytorch+examples", "distributed/minGPT-ddp/mingpt/trainer.py:74", "DL201", T, "",
     "stored as self.train_loader, _run_epoch per epoch (:149)"),
    ("pytorch+examples", "imagenet/main.py:269", "DL201", T, "", "train() per epoch (:286)"),
    ("pytorch+examples", "imagenet/main.py:273", "DL201", T, "", "validate() every epoch (:289)"),
    ("pytorch+examples", "mnist_forward_forward/main.py:153", "DL102", T, "",
     "transforms.Lambda(lambda ...) in the dataset; num_workers=1 on accelerators via a kwargs splat (:145)"),
    ("pytorch+examples", "super_resolution/main.py:37", "DL201", T, "", "train(epoch) in the module-level loop (:81)"),
    ("pytorch+examples", "super_resolution/main.py:38", "DL201", T, "", "test() every epoch"),
    ("pytorch+examples", "super_resolution/main.py:81", "DL101", T, "", "module-level epoch loop, --threads 4"),
    # --- ultralytics/yolov5
    ("ultralytics+yolov5", "utils/dataloaders.py:1000", "DL201", F, "S3",
     "InfiniteDataLoader keeps one iterator over a _RepeatSampler for its lifetime (same file)"),
    # --- openai/improved-diffusion
    ("openai+improved-diffusion", "improved_diffusion/image_datasets.py:45", "DL201", T, "",
     "`while True: yield from loader` re-iterates the loader: each pass restarts the worker"),
    ("openai+improved-diffusion", "improved_diffusion/image_datasets.py:49", "DL201", T, "", "same, shuffled arm"),
    # --- lucidrains/denoising-diffusion-pytorch
    ("lucidrains+denoising-diffusion-pytorch", "denoising_diffusion_pytorch/denoising_diffusion_pytorch.py:955",
     "DL201", T, "", "cycle(dl) is `while True: for data in dl` (:60-63): workers restart every pass"),
    ("lucidrains+denoising-diffusion-pytorch", "denoising_diffusion_pytorch/denoising_diffusion_pytorch.py:955",
     "DL202", T, "", "num_workers=cpu_count()"),
    ("lucidrains+denoising-diffusion-pytorch", "denoising_diffusion_pytorch/denoising_diffusion_pytorch_1d.py:818",
     "DL201", T, "", "same cycle(dl)"),
    ("lucidrains+denoising-diffusion-pytorch", "denoising_diffusion_pytorch/denoising_diffusion_pytorch_1d.py:818",
     "DL202", T, "", "num_workers=cpu_count()"),
    ("lucidrains+denoising-diffusion-pytorch", "denoising_diffusion_pytorch/guided_diffusion.py:853",
     "DL201", T, "", "same cycle(dl)"),
    ("lucidrains+denoising-diffusion-pytorch", "denoising_diffusion_pytorch/guided_diffusion.py:853",
     "DL202", T, "", "num_workers=cpu_count()"),
    ("lucidrains+denoising-diffusion-pytorch", "denoising_diffusion_pytorch/repaint.py:990",
     "DL201", T, "", "same cycle(dl)"),
    ("lucidrains+denoising-diffusion-pytorch", "denoising_diffusion_pytorch/repaint.py:990",
     "DL202", T, "", "num_workers=cpu_count()"),
    # --- CompVis/stable-diffusion
    ("CompVis+stable-diffusion", "main.py:203", "DL201", T, "", "bound as train_dataloader hook (:173): every epoch"),
    ("CompVis+stable-diffusion", "main.py:212", "DL201", T, "", "bound as val_dataloader hook (:176): every epoch"),
    ("CompVis+stable-diffusion", "main.py:228", "DL201", F, "S5",
     "_test_dataloader bound as the test_dataloader hook in __init__ (:179): trainer.test runs it once"),
    ("CompVis+stable-diffusion", "main.py:236", "DL201", F, "S5", "_predict_dataloader, bound as predict hook (:182)"),
    # --- mlfoundations/open_clip
    ("mlfoundations+open_clip", "scripts/genlip_attentive_probe.py:119", "DL201", F, "S4",
     "build_loader returns it; each caller's loader is iterated once by cache_features (:244, :247)"),
    ("mlfoundations+open_clip", "scripts/genlip_zeroshot.py:196", "DL206", T, "",
     "batch fields .to(device, non_blocking=True) (:205-207), no pin_memory"),
    ("mlfoundations+open_clip", "src/open_clip_train/data.py:253", "DL201", T, "",
     "ImageNet zero-shot loader kept in DataInfo, evaluated every zeroshot_frequency epochs"),
    ("mlfoundations+open_clip", "src/open_clip_train/data.py:1040", "DL201", T, "",
     "CSV train/val loader in DataInfo, iterated every epoch by train_one_epoch/evaluate"),
    ("mlfoundations+open_clip", "src/open_clip_train/data.py:1106", "DL201", T, "", "synthetic data, same"),
    # --- jaywalnut310/vits
    ("jaywalnut310+vits", "train.py:75", "DL201", T, "", "train_and_evaluate per epoch (:117, :137)"),
    ("jaywalnut310+vits", "train.py:79", "DL201", T, "", "evaluate() every eval_interval steps restarts 8 workers (:224)"),
    ("jaywalnut310+vits", "train_ms.py:75", "DL201", T, "", "same as train.py"),
    ("jaywalnut310+vits", "train_ms.py:79", "DL201", T, "", "same as train.py"),
    # --- huggingface/accelerate
    ("huggingface+accelerate", "examples/complete_cv_example.py:151", "DL201", T, "", "epoch loop (:212)"),
    ("huggingface+accelerate", "examples/complete_cv_example.py:152", "DL201", T, "", "eval every epoch"),
    ("huggingface+accelerate", "examples/cv_example.py:115", "DL201", T, "", "epoch loop"),
    ("huggingface+accelerate", "examples/cv_example.py:116", "DL201", T, "", "eval every epoch"),
    ("huggingface+accelerate", "src/accelerate/test_utils/scripts/test_distributed_data_loop.py:406", "DL201", F, "S1",
     "`loader` bound four times, each passed once to test_data_loader (one pass after accelerator.prepare, :262-265)"),
    ("huggingface+accelerate", "src/accelerate/test_utils/scripts/test_distributed_data_loop.py:410", "DL201", F, "S1",
     "same"),
    ("huggingface+accelerate", "src/accelerate/test_utils/scripts/test_distributed_data_loop.py:415", "DL201", F, "S1",
     "same"),
    ("huggingface+accelerate", "src/accelerate/test_utils/scripts/test_distributed_data_loop.py:420", "DL201", F, "S1",
     "same"),
    ("huggingface+accelerate", "tests/test_accelerator.py:104", "DL201", D, "",
     "test factory; one test iterates the prepared loader twice (save/resume), tiny TensorDataset"),
    ("huggingface+accelerate", "tests/test_accelerator.py:105", "DL201", D, "", "same"),
    ("huggingface+accelerate", "tests/test_state_checkpointing.py:54", "DL201", T, "",
     "train(num_epochs=...) iterates it per epoch (:65-70), 4 workers"),
    ("huggingface+accelerate", "tests/test_state_checkpointing.py:55", "DL201", T, "", "same, valid loader"),
    # --- facebookresearch/detectron2
    ("facebookresearch+detectron2", "configs/Misc/torchvision_imagenet_R_50.py:40", "DL201", D, "S3",
     "train: TrainingSampler never ends (one pass); test: InferenceSampler, re-run by the eval hook"),
    ("facebookresearch+detectron2", "detectron2/data/build.py:675", "DL201", F, "S4",
     "build_detection_test_loader: callers build one per evaluation and iterate it once"),
    ("facebookresearch+detectron2", "projects/DensePose/densepose/data/build.py:663", "DL201", F, "S3",
     "sampler is detectron2's TrainingSampler (endless, other file)"),
    ("facebookresearch+detectron2", "tests/data/test_sampler.py:52", "DL201", F, "S1",
     "data_loader bound twice (0 then 2 workers), each islice'd once"),
    # --- facebookresearch/fairseq
    ("facebookresearch+fairseq", "examples/MMPT/mmpt/tasks/retritask.py:63", "DL201", T, "",
     "stored as self.retri_dataloader, retrive_candidates(epoch) every epoch (fairseqmmtask.py:76-78)"),
    ("facebookresearch+fairseq", "examples/MMPT/mmpt_cli/predict.py:43", "DL201", T, "",
     "one loader evaluated for every checkpoint (predict.py:74-78), 6 workers"),
    ("facebookresearch+fairseq", "examples/MMPT/scripts/text_token_extractor/pretokenization.py:82", "DL103", T, "",
     "nested collator sent to 16 workers"),
    ("facebookresearch+fairseq", "examples/MMPT/scripts/text_token_extractor/pretokenization.py:82", "DL202", F, "T",
     "16 workers, at the threshold of issue 10"),
    ("facebookresearch+fairseq", "examples/MMPT/scripts/video_feature_extractor/extract.py:95", "DL206", F, "S6",
     "video = preprocess(data['video'].squeeze()); video[a:b:f].cuda() copies a computed tensor (:110-129)"),
    ("facebookresearch+fairseq", "examples/MMPT/scripts/video_feature_extractor/extract.py:105", "DL101", T, "",
     "module-level loop over a 4-worker loader"),
    ("facebookresearch+fairseq", "examples/wav2vec/vq-wav2vec_featurize.py:207", "DL201", F, "S4",
     "load_data returns a fresh loader per split, iterated once by iterate() (:135-136)"),
    # --- kuangliu/pytorch-cifar
    ("kuangliu+pytorch-cifar", "main.py:44", "DL201", T, "", "train(epoch) in the module-level 200-epoch loop"),
    ("kuangliu+pytorch-cifar", "main.py:44", "DL206", T, "", "inputs.to(device), device = 'cuda' if available"),
    ("kuangliu+pytorch-cifar", "main.py:49", "DL201", T, "", "test(epoch) every epoch"),
    ("kuangliu+pytorch-cifar", "main.py:49", "DL206", T, "", "same copies in test()"),
    ("kuangliu+pytorch-cifar", "main.py:151", "DL101", T, "", "module-level epoch loop, 2 workers"),
    # --- huggingface/diffusers (examples/)
    *(
        ("huggingface+diffusers", f"examples/{path}", "DL206", T, "",
         "latent-caching pass copies batch['pixel_values'] with non_blocking=True before accelerator.prepare")
        for path in (
            "advanced_diffusion_training/train_dreambooth_lora_flux_advanced.py:1861",
            "advanced_diffusion_training/train_dreambooth_lora_sd15_advanced.py:1536",
            "advanced_diffusion_training/train_dreambooth_lora_sdxl_advanced.py:1870",
            "dreambooth/train_dreambooth_lora_flux.py:1482",
            "dreambooth/train_dreambooth_lora_flux2.py:1651",
            "dreambooth/train_dreambooth_lora_flux2_img2img.py:1475",
            "dreambooth/train_dreambooth_lora_flux2_klein.py:1611",
            "dreambooth/train_dreambooth_lora_flux2_klein_img2img.py:1469",
            "dreambooth/train_dreambooth_lora_flux_kontext.py:1727",
            "dreambooth/train_dreambooth_lora_hidream.py:1338",
            "dreambooth/train_dreambooth_lora_ideogram4.py:1654",
            "dreambooth/train_dreambooth_lora_krea2.py:1642",
            "dreambooth/train_dreambooth_lora_lumina2.py:1190",
            "dreambooth/train_dreambooth_lora_qwen_image.py:1542",
            "dreambooth/train_dreambooth_lora_sana.py:1213",
            "dreambooth/train_dreambooth_lora_sd3.py:1522",
            "dreambooth/train_dreambooth_lora_z_image.py:1510",
            "research_projects/flux_lora_quantization/train_dreambooth_lora_flux_miniature.py:908",
        )
    ),
    ("huggingface+diffusers", "examples/amused/train_amused.py:656", "DL206", D, "",
     "the loop iterates the accelerate-prepared loader (:679, :757): accelerate makes the copy, from pageable memory"),
    ("huggingface+diffusers", "examples/vqgan/train_vqgan.py:809", "DL206", T, "",
     "loader not prepared (:833); .to(device, non_blocking=True) in the loop (:900)"),
    ("huggingface+diffusers", "examples/research_projects/colossalai/train_dreambooth_colossalai.py:510", "DL206", T, "",
     "every batch field .to(device, non_blocking=True) (:569)"),
    ("huggingface+diffusers", "examples/research_projects/colossalai/train_dreambooth_colossalai.py:510", "DL201", T, "",
     "epoch loop (:563)"),
    ("huggingface+diffusers", "examples/research_projects/colossalai/train_dreambooth_colossalai.py:511", "DL103", T, "",
     "nested collate_fn, num_workers=1"),
    ("huggingface+diffusers", "examples/cosmos/train_cosmos_predict25_lora.py:421", "DL201", T, "",
     "build_dataloader's loader prepared and iterated per epoch (:568, :630)"),
    ("huggingface+diffusers", "examples/custom_diffusion/train_custom_diffusion.py:1037", "DL201", T, "",
     "epoch loop (:1136)"),
    ("huggingface+diffusers", "examples/custom_diffusion/train_custom_diffusion.py:1041", "DL102", T, "",
     "collate_fn=lambda with num_workers=args.dataloader_num_workers"),
    ("huggingface+diffusers", "examples/research_projects/autoencoder_rae/train_autoencoder_rae.py:249", "DL201", T, "",
     "epoch loop (:333)"),
    ("huggingface+diffusers", "examples/research_projects/autoencoder_rae/train_autoencoder_rae.py:252", "DL103", T, "",
     "nested collate_fn with num_workers=args.dataloader_num_workers"),
    ("huggingface+diffusers", "examples/research_projects/dreambooth_inpaint/train_dreambooth_inpaint.py:448", "DL201",
     F, "S4", "class-image sample_dataloader, prepared and iterated once (:451, :455)"),
    ("huggingface+diffusers", "examples/research_projects/dreambooth_inpaint/train_dreambooth_inpaint_lora.py:447",
     "DL201", F, "S4", "same"),
    ("huggingface+diffusers", "examples/research_projects/multi_subject_dreambooth/train_multi_subject_dreambooth.py:965",
     "DL201", T, "", "epoch loop (:1067)"),
    ("huggingface+diffusers", "examples/research_projects/multi_subject_dreambooth/train_multi_subject_dreambooth.py:969",
     "DL102", T, "", "collate_fn=lambda, num_workers=1"),
    ("huggingface+diffusers", "examples/research_projects/pytorch_xla/training/text_to_image/train_text_to_image_xla.py:607",
     "DL002", T, "", "defaults --dataloader_num_workers 0 and --loader_prefetch_factor 2: ValueError"),
    ("huggingface+diffusers", "examples/research_projects/realfill/train_realfill.py:733", "DL201", T, "",
     "epoch loop (:835)"),
    ("huggingface+diffusers", "examples/research_projects/sana/train_sana_sprint_diffusers.py:1239", "DL001", T, "",
     "persistent_workers=True with --dataloader_num_workers default 0: ValueError"),
    ("huggingface+diffusers", "examples/t2i_adapter/train_t2i_adapter_sdxl.py:1074", "DL201", T, "", "epoch loop (:1172)"),
    # --- Lightning-AI/pytorch-lightning (examples/)
    ("Lightning-AI+pytorch-lightning", "examples/fabric/build_your_own_trainer/run.py:64", "DL201", T, "",
     "MyCustomTrainer.fit (trainer.py) runs train_loader every epoch"),
    ("Lightning-AI+pytorch-lightning", "examples/fabric/build_your_own_trainer/run.py:67", "DL201", T, "",
     "val_loop every epoch"),
    ("Lightning-AI+pytorch-lightning", "examples/fabric/dcgan/train_fabric.py:26", "DL202", T, "", "workers = os.cpu_count()"),
    ("Lightning-AI+pytorch-lightning", "examples/fabric/dcgan/train_fabric.py:69", "DL201", T, "", "epoch loop (:120)"),
    ("Lightning-AI+pytorch-lightning", "examples/fabric/dcgan/train_torch.py:25", "DL202", T, "", "workers = os.cpu_count()"),
    ("Lightning-AI+pytorch-lightning", "examples/fabric/dcgan/train_torch.py:68", "DL201", T, "", "epoch loop (:131)"),
    ("Lightning-AI+pytorch-lightning", "examples/fabric/fp8_distributed_transformer/train.py:46", "DL201", F, "N3",
     "one pass of at most 100 steps; rebound by fabric.setup_dataloaders (:67), iterated in two arms of one conditional (:69)"),
    ("Lightning-AI+pytorch-lightning", "examples/pytorch/domain_templates/computer_vision_fine_tuning.py:143", "DL201",
     T, "", "shared by train_dataloader/val_dataloader hooks"),
    ("Lightning-AI+pytorch-lightning", "examples/pytorch/domain_templates/imagenet.py:160", "DL201", T, "",
     "train_dataloader hook"),
    ("Lightning-AI+pytorch-lightning", "examples/pytorch/domain_templates/imagenet.py:169", "DL201", T, "",
     "val_dataloader hook (test_dataloader reuses it once)"),
    ("Lightning-AI+pytorch-lightning", "examples/pytorch/fp8_distributed_transformer/train.py:67", "DL201", D, "",
     "trainer.fit re-iterates per epoch, but max_steps=100 ends inside the first epoch"),
    ("Lightning-AI+pytorch-lightning", "examples/pytorch/tensor_parallel/train.py:46", "DL201", F, "N4",
     "train_dataloader hook, but the file's only Trainer has max_epochs=1 (:59-64)"),
    # --- microsoft/Swin-Transformer (built in data/, iterated in main*.py)
    ("microsoft+Swin-Transformer", "data/build.py:69", "DL201", T, "",
     "build_loader's train loader, train_one_epoch per epoch in main.py:158"),
    ("microsoft+Swin-Transformer", "data/build.py:77", "DL201", T, "", "val loader, validate() every epoch (main.py:164)"),
    ("microsoft+Swin-Transformer", "data/data_simmim_ft.py:33", "DL201", T, "",
     "train loader, per epoch in main_simmim_ft.py:141"),
    ("microsoft+Swin-Transformer", "data/data_simmim_ft.py:41", "DL201", T, "", "val loader every epoch"),
    ("microsoft+Swin-Transformer", "data/data_simmim_pt.py:97", "DL201", T, "", "pretraining loader, per epoch"),
    # --- huggingface/pytorch-image-models (top-level scripts + timm/data)
    ("huggingface+pytorch-image-models", "timm/data/naflex_loader.py:437", "DL201", T, "",
     "the NaFlex eval loader omits the persistent_workers its train twin gets; train.py validates every epoch (:1150)"),
    # --- facebookresearch/barlowtwins
    ("facebookresearch+barlowtwins", "evaluate.py:148", "DL201", T, "", "epoch loop (:152, :161)"),
    ("facebookresearch+barlowtwins", "evaluate.py:149", "DL201", T, "", "val loader every epoch (:185)"),
    ("facebookresearch+barlowtwins", "main.py:117", "DL201", T, "", "epoch loop (:123)"),
    # --- nemo_toolkit 3.0.0 (wheel)
    *(
        ("nemo_toolkit-3.0.0", f"nemo/collections/{path}", "DL201", T, "",
         "_setup_dataloader_from_config builds the train/val/test loaders (self._train_dl, returned by ModelPT's "
         "train_dataloader hook): re-iterated every epoch")
        for path in (
            "asr/models/classification_models.py:311",
            "asr/models/classification_models.py:610",
            "asr/models/classification_models.py:1152",
            "asr/models/ctc_bpe_models.py:154",
            "asr/models/ctc_models.py:369",
            "asr/models/hybrid_rnnt_ctc_bpe_models.py:197",
            "asr/models/hybrid_rnnt_ctc_bpe_models_prompt.py:238",
            "asr/models/label_models.py:272",
            "asr/models/rnnt_bpe_models.py:496",
            "asr/models/rnnt_bpe_models_prompt.py:220",
            "asr/models/rnnt_models.py:541",
            "asr/models/sortformer_diar_models.py:248",
            "asr/models/ssl_models.py:223",
            "asr/models/ssl_models.py:885",
            "asr/models/transformer_bpe_models.py:258",
            "audio/models/audio_to_audio.py:267",
            "tts/models/ssl_tts.py:163",
            "tts/models/ssl_tts.py:184",
        )
    ),
    *(
        ("nemo_toolkit-3.0.0", f"nemo/collections/asr/models/classification_models.py:{line}", "DL201", F, "N2",
         "_setup_feature_label_dataloader's only callers store it as self._test_dl (:231, :498): test runs once")
        for line in (348, 529, 1181)
    ),
    ("nemo_toolkit-3.0.0", "nemo/collections/asr/parts/mixins/diarization.py:532", "DL201", F, "S4",
     "fresh loader per diarize() call, iterated once"),
    ("nemo_toolkit-3.0.0", "nemo/collections/asr/parts/mixins/transcription.py:692", "DL201", F, "S4",
     "fresh loader per transcribe() call, iterated once"),
    ("nemo_toolkit-3.0.0", "nemo/collections/tts/g2p/models/ctc.py:317", "DL201", F, "S4",
     "_setup_infer_dataloader: one loader per inference call (:348)"),
    ("nemo_toolkit-3.0.0", "nemo/collections/tts/g2p/models/t5.py:127", "DL201", F, "S4", "same (:159)"),
    # --- espnet 202511 (wheel)
    ("espnet-202511", "espnet2/speechlm/dataloader/iterator.py:251", "DL201", F, "S4",
     "build_iter builds a fresh loader over a fixed batch subset per call; each is iterated once"),
)


def by_key() -> dict[tuple[str, str, str], tuple[str, str, str]]:
    """(source, "path:line", code) -> (verdict, shape, reason)."""
    table: dict[tuple[str, str, str], tuple[str, str, str]] = {}
    for source, where, code, verdict, shape, reason in JUDGMENTS:
        key = (source, where, code)
        if key in table:
            raise ValueError(f"judged twice: {key}")
        table[key] = (verdict, shape, reason)
    return table
